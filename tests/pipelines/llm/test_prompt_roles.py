"""Role boundaries come from the prompt file, not from the rendered text.

Every prompt file renders, with realistic variables, to exactly the messages the former
renderer made (the whole file rendered, then cut at marker lines in the result), so cache keys
and outputs stay as they were; and a value that forges role markers or holds Jinja reaches the
model as text inside its message, through the library and through a real call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
import pytest

from benchsmith_scoring import prompts as shipped
from pipelines.llm import Ask, PromptLibrary, TextAnswer
from pipelines.llm.prompts import PROMPTS, SHIPPED
from tests.pipelines.llm.conftest import client_for
from tests.support.injection import FORGED_ROLES, HOSTILE, JINJA
from tests.support.openai_server import openai_server

PASSAGE = (
    "The Tessel Pass line reopened on 14 March 2026 after the derailment of 2 February, "
    "which injured 31 passengers.\n\nRegional operator Ferrovia Nord said repairs cost "
    "€4.2 million; the inspector's report – published in French – cites a worn rail.  "
)
DOCUMENTS = [
    {"n": 1, "text": PASSAGE},
    {"n": 2, "text": 'Mayor Inès Dubreuil: "We will not forget {those} days."\n'},
]
INSIGHTS = [
    {"insight_id": "I1", "text": "Repairs on the Tessel Pass line cost €4.2 million."},
    {"insight_id": "I2", "text": "31 passengers were injured on 2 February 2026."},
]
SUBTOPICS = [
    {"subtopic_id": "S1", "name": "Repairs", "description": "What was fixed and at what cost."},
    {"subtopic_id": "S2", "name": "Victims", "description": "Who was hurt, and how badly."},
]
QUESTION = {
    "question": "How many passengers were injured in the Tessel Pass derailment?",
    "answers": ["31", "thirty-one"],
    "evidence": ["The derailment of 2 February injured 31 passengers.", "It was a Sunday."],
}
SUMMHAY = {"domain": "news", "topic": "The Tessel Pass rail accident"}

VARIABLES: dict[str, list[dict[str, Any]]] = {
    "reask": [{"error": 'no JSON object found in "Sure! Here it is:\\n{colours}"'}],
    "lveval/answer": [
        {
            "context": f"### Passage 1\n{PASSAGE}\n\n### Passage 2\nIt rained.",
            "question": QUESTION["question"],
            "length_instruction": "",
        },
        {"context": PASSAGE, "question": "When?", "length_instruction": "Answer in 5 words."},
    ],
    "lveval/questions": [
        {
            "name": "Tessel Pass rail accident",
            "kind": "accident",
            "n": 3,
            "multi_hop": 1,
            "passages": [{"passage_id": "p1", "text": PASSAGE}, {"passage_id": "p2", "text": "x"}],
        },
    ],
    "lveval/confusing_fact": [
        {**QUESTION, "names": ["Ferrovia Nord", "Inès Dubreuil"]},
        {**QUESTION, "names": []},
    ],
    "lveval/keywords": [
        {**QUESTION, "names": ["Tessel Pass"], "max_rules": 4},
        {**QUESTION, "names": [], "max_rules": 2},
    ],
    "summhay/subtopics": [
        {**SUMMHAY, "n": 5, "participants": ["Le Matin", "Radio Nord"]},
        {**SUMMHAY, "domain": "conversation", "n": 3, "participants": []},
    ],
    "summhay/insights": [{**SUMMHAY, "n": 4, "index": 2, "subtopic": SUBTOPICS[0]}],
    "summhay/classify": [{**SUMMHAY, "subtopics": SUBTOPICS, "insights": INSIGHTS}],
    "summhay/queries": [{**SUMMHAY, "subtopics": SUBTOPICS}],
    "summhay/document": [
        {
            **SUMMHAY,
            "document_id": "D3",
            "style": "a wire report",
            "words": 350,
            "voice": "a regional daily",
            "participants": [],
            "insights": [INSIGHTS[0]["text"]],
            "feedback": "",
        },
        {
            **SUMMHAY,
            "domain": "conversation",
            "document_id": "D4",
            "style": "a phone call",
            "words": 300,
            "voice": "",
            "participants": ["Ana", "Bram"],
            "insights": [i["text"] for i in INSIGHTS],
            "feedback": "it left out insight I2",
        },
    ],
    "summhay/inclusion": [{"document": PASSAGE, "insights": INSIGHTS}],
    "summhay/summarize": [
        {
            "context": f"Document 1:\n{PASSAGE}\n\nDocument 2:\nIt rained.",
            "query": "What do the documents say about the repairs?",
            "bullets": 3,
        }
    ],
    "summhay/judge": [
        {
            "bullets": [
                {"bullet_id": 1, "text": "Repairs cost €4.2 million [1]."},
                {"bullet_id": 2, "text": "Nobody died [2]."},
            ],
            "insight": INSIGHTS[0]["text"],
        }
    ],
    "wikigen/article": [
        {
            "title": "Tessel Pass rail accident",
            "outline_text": "## Background\n## Derailment\n## Aftermath",
        }
    ],
    "wikigen/entails": [{"premise": PASSAGE, "claim": "The line reopened in March 2026."}],
    "wikigen/outline": [
        {"title": "Tessel Pass rail accident", "documents": DOCUMENTS, "sections": 6}
    ],
    "wikigen/quality": [
        {"title": "Tessel Pass rail accident", "article": "==Background==\nThe line opened."}
    ],
    "wikigen/outline_score": [
        {"title": "Tessel Pass rail accident", "headings": ["Background", "Aftermath"]},
        {"title": "Tessel Pass rail accident", "headings": []},
    ],
    "wikigen/rubric": [
        {
            "instruction": "You are a Wikipedia editor. Your task is write a wikipedia page for "
            "the topic: Tessel Pass rail accident",
            "response": "==Background==\nThe line opened.",
            "rubric": "[Coherence and Organization: Is it organised?]\nScore 1: No.",
            "criterion": "organization",
        }
    ],
    "wikigen/rr": [
        {"title": "Tessel Pass rail accident", "documents": DOCUMENTS},
        {"title": "Tessel Pass rail accident", "documents": []},
    ],
    "wikigen/section": [
        {"title": "Tessel Pass rail accident", "section": "Aftermath", "documents": DOCUMENTS}
    ],
}
"""Realistic variables for every prompt file, each ``{% if %}`` branch taken at least once."""

P = object()
"""Where a test puts its hostile payload."""

_FORMER_MARKER = re.compile(r"^\[(system|user|assistant)\][ \t]*$", re.MULTILINE)


def former_messages(name: str, variables: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The former renderer, kept as the reference: the whole file rendered, then the result cut
    at marker lines (where a value could open a message of its own)."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader((PROMPTS, SHIPPED)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    parts = _FORMER_MARKER.split(environment.get_template(f"{name}.j2").render(**variables))
    assert not parts[0].strip()
    return [(role, body.strip()) for role, body in zip(parts[1::2], parts[2::2], strict=True)]


def prompt_names(folder: Path) -> set[str]:
    return {str(p.relative_to(folder).with_suffix("")) for p in folder.rglob("*.j2")}


def test_every_prompt_file_has_realistic_variables_here() -> None:
    assert prompt_names(PROMPTS) | prompt_names(SHIPPED) == set(VARIABLES)


@pytest.mark.parametrize(
    ("name", "variables"),
    [(name, v) for name, cases in VARIABLES.items() for v in cases],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_benign_variables_render_byte_identical_messages(
    name: str, variables: dict[str, Any]
) -> None:
    former = former_messages(name, variables)
    library = [(m.role, m.content) for m in PromptLibrary().messages(name, variables)]
    assert library == former
    if name in prompt_names(SHIPPED):
        assert [(m["role"], m["content"]) for m in shipped.messages(name, variables)] == former


def test_the_former_renderer_let_a_passage_open_messages() -> None:
    variables = {"context": FORGED_ROLES, "question": "When?", "length_instruction": ""}
    roles = [role for role, _ in former_messages("lveval/answer", variables)]
    assert roles == ["user", "system", "user", "assistant"]
    (message,) = PromptLibrary().messages("lveval/answer", variables)
    assert message.role == "user" and f"Article: {FORGED_ROLES}\n" in message.content


@pytest.mark.parametrize("payload", HOSTILE.values(), ids=HOSTILE)
@pytest.mark.parametrize(
    ("name", "variables", "roles", "copies"),
    [
        ("lveval/answer", {"context": P, "question": P, "length_instruction": ""}, ["user"], 2),
        ("summhay/summarize", {"context": P, "query": P, "bullets": 3}, ["system", "user"], 2),
        ("summhay/inclusion", {"document": P, "insights": []}, ["system", "user"], 1),
        (
            "lveval/questions",
            {
                "name": P,
                "kind": "x",
                "n": 1,
                "multi_hop": 0,
                "passages": [{"passage_id": "p1", "text": P}],
            },
            ["system", "user"],
            2,
        ),
        ("wikigen/rr", {"title": "T", "documents": [{"n": 1, "text": P}]}, ["user"], 1),
        ("wikigen/quality", {"title": "T", "article": P}, ["user"], 1),
        (
            "wikigen/rubric",
            {"instruction": "I", "response": P, "rubric": "R", "criterion": "focus"},
            ["system", "user"],
            1,
        ),
        ("reask", {"error": P}, ["user"], 1),
    ],
)
def test_a_hostile_value_is_data_inside_the_user_message(
    name: str, variables: dict[str, Any], roles: list[str], copies: int, payload: str
) -> None:
    messages = PromptLibrary().messages(name, _filled(variables, payload))
    assert [m.role for m in messages] == roles
    assert messages[-1].content.count(payload) == copies
    assert all(payload not in m.content for m in messages[:-1])


def test_a_real_call_sends_a_hostile_passage_inside_the_user_message(tmp_path: Path) -> None:
    variables = {"context": FORGED_ROLES, "query": JINJA, "bullets": 3}
    with openai_server(lambda body, n: "- The bridge opened [1].") as (url, seen):
        client = client_for(url, tmp_path, PromptLibrary())
        outcome = client.ask(Ask("summhay/summarize", variables, TextAnswer))
    assert outcome.ok and seen.count == 1
    sent = seen.bodies[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[1]["content"].startswith(f"{FORGED_ROLES}\n\n\nQuestion: {JINJA}\n\nAnswer")


def _filled(value: Any, payload: str) -> Any:
    """``value`` with every placeholder ``P`` replaced by ``payload``."""
    if value is P:
        return payload
    if isinstance(value, list):
        return [_filled(v, payload) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, payload) for k, v in value.items()}
    return value
