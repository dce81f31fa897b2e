"""Haystack synthesis through the real LLM client and template backend, with answers that go
wrong on purpose: every failure is recorded with its step and reason, and only verified items
are kept."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from builders.summhay import responders as summhay_responders
from builders.summhay.records import Topic
from builders.summhay.settings import SummhaySettings
from pipelines.llm import LLMClient, LLMSettings, TemplateBackend
from pipelines.synthesis.summhay import synthesize

TOPIC = Topic("t1", "news", "A storm floods the harbour district of Valdra", ("Herald", "Courier"))
SETTINGS = SummhaySettings(
    subtopics=3, insights_per_subtopic=3, documents=9, words_per_document=80, document_attempts=2
)
Responder = Callable[[Mapping[str, Any]], str]


def run(tmp_path: Path, **overrides: Responder):
    responders = {**summhay_responders.responders(), **overrides}
    settings = LLMSettings(backend="template", reasks=1, cache=tmp_path / "c.sqlite")
    client = LLMClient(settings, TemplateBackend(responders))
    return synthesize(client, TOPIC, SETTINGS), client


def reasons(result) -> set[tuple[str, str, str]]:
    return {(d.kind, d.step, d.reason) for d in result.drops}


def test_clean_run_keeps_everything_and_gold_matches_documents(tmp_path: Path) -> None:
    result, client = run(tmp_path)
    h = result.haystack
    assert result.drops == []
    assert len(h.subtopics) == 3 and len(h.insights) == 9 and len(h.documents) == 9
    assert all(s.query for s in h.subtopics)
    for insight in h.insights:
        gold = h.gold(insight.insight_id)
        assert gold, insight.insight_id
        for doc in h.documents:
            assert (insight.text in doc.text) == (doc.document_id in gold)
    assert client.stats()["failed"] == 0


def test_a_document_missing_an_insight_is_regenerated_with_the_reason(tmp_path: Path) -> None:
    write = summhay_responders.document_responder({})
    feedback: list[str] = []

    def forgetful(v: Mapping[str, Any]) -> str:
        if not v["feedback"]:
            return write({**v, "insights": v["insights"][:-1]})
        feedback.append(v["feedback"])
        return write(v)

    result, _ = run(tmp_path, **{"summhay/document": forgetful})
    h = result.haystack
    assert len(h.documents) == 9 and {d.attempts for d in h.documents} == {2}
    assert feedback and all(f.startswith("missing planned insights S") for f in feedback)


def haystack_insights(v: Mapping[str, Any]) -> list[str]:
    """The insights the template writes for this topic (what synthesis will have)."""
    subs = json.loads(summhay_responders.subtopics({**v, "n": SETTINGS.subtopics}))["subtopics"]
    return [
        text
        for i, sub in enumerate(subs)
        for text in json.loads(
            summhay_responders.insights(
                {**v, "subtopic": sub, "index": i + 1, "n": SETTINGS.insights_per_subtopic}
            )
        )["insights"]
    ]


def test_a_document_that_keeps_carrying_an_unplanned_insight_is_dropped(tmp_path: Path) -> None:
    write = summhay_responders.document_responder({})

    def leaky(v: Mapping[str, Any]) -> str:
        text = write(v)
        if v["document_id"] == "D2":
            stray = next(t for t in haystack_insights(v) if t not in v["insights"])
            text += " " + stray
        return text

    result, _ = run(tmp_path, **{"summhay/document": leaky})
    drop = next(d for d in result.drops if d.item_id == "D2")
    assert (drop.kind, drop.step, drop.reason) == ("document", "inclusion", "failed_verification")
    assert re.fullmatch(r"carries unplanned insights S\d\.\d", drop.detail)
    h = result.haystack
    assert "D2" not in {d.document_id for d in h.documents}
    assert all("D2" not in h.gold(i.insight_id) for i in h.insights)
    assert all(h.gold(i.insight_id) for i in h.insights), "no insight is left without a document"


def test_broken_and_misfiled_insights_are_dropped_with_reasons(tmp_path: Path) -> None:
    def insights(v: Mapping[str, Any]) -> str:
        answer = json.loads(summhay_responders.insights(v))
        if v["index"] == 2:
            return "I cannot think of any insights."
        if v["index"] == 3:
            # a near-duplicate of the first subtopic's first insight
            answer["insights"][1] = haystack_insights(v)[0].replace(" said ", " stated ")
        return json.dumps(answer)

    def classify(v: Mapping[str, Any]) -> str:
        answer = json.loads(summhay_responders.classify(v))
        for a in answer["assignments"]:
            if a["insight_id"] == "S1.2":
                a["subtopic_id"] = "S3"
        return json.dumps(answer)

    result, client = run(tmp_path, **{"summhay/insights": insights, "summhay/classify": classify})
    found = reasons(result)
    assert ("subtopic", "insights", "generation_failed") in found
    assert ("insight", "dedup", "near_duplicate") in found
    assert ("insight", "classify", "misclassified") in found
    detail = {d.item_id: d.detail for d in result.drops}
    assert detail["S1.2"] == "written for S1, classified as S3"
    assert detail["S3.2"] == "repeats S1.1"
    assert detail["S2"].startswith("invalid_answer: the answer contains no JSON")
    h = result.haystack
    assert {s.subtopic_id for s in h.subtopics} == {"S1", "S3"}
    assert {i.insight_id for i in h.insights} == {"S1.1", "S1.3", "S3.1", "S3.3"}
    assert client.stats()["reasks"] >= 1


def test_a_subtopic_without_a_query_leaves_with_its_insights(tmp_path: Path) -> None:
    def queries(v: Mapping[str, Any]) -> str:
        answer = json.loads(summhay_responders.queries(v))
        answer["queries"] = [q for q in answer["queries"] if q["subtopic_id"] != "S2"]
        return json.dumps(answer)

    result, _ = run(tmp_path, **{"summhay/queries": queries})
    assert ("subtopic", "queries", "no_query") in reasons(result)
    h = result.haystack
    assert "S2" not in {s.subtopic_id for s in h.subtopics}
    assert not any(i.subtopic_id == "S2" for i in h.insights)


def test_unusable_subtopics_drop_the_topic(tmp_path: Path) -> None:
    result, _ = run(
        tmp_path,
        **{
            "summhay/subtopics": lambda v: (
                '{"subtopics": [{"name": "Only one", "description": "x y z"}]}'
            )
        },
    )
    assert result.haystack is None
    (drop,) = result.drops
    assert (drop.kind, drop.step, drop.reason) == ("topic", "subtopics", "generation_failed")
    assert "give 3 subtopics with distinct names (got 1 distinct)" in drop.detail


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_documents_count_as_failed_attempts(tmp_path: Path, text: str) -> None:
    result, _ = run(tmp_path, **{"summhay/document": lambda v: text})
    assert result.haystack is None
    kinds = reasons(result)
    assert ("document", "inclusion", "failed_verification") in kinds
    assert ("topic", "documents", "empty") in kinds
    assert all(
        re.search("the answer is empty", d.detail) for d in result.drops if d.kind == "document"
    )


def test_embedding_dedup_catches_a_paraphrase_lexical_misses(tmp_path: Path) -> None:
    def insights(v: Mapping[str, Any]) -> str:
        answer = json.loads(summhay_responders.insights(v))
        if v["index"] == 1:
            answer["insights"] = [
                "The council approved 4,200 euros for new flood barriers on 3 May.",
                "On 3 May the council signed off 4,200 euros for new flood defences.",
                "Forty volunteers cleared the river bank near Brask on Sunday.",
            ]
        return json.dumps(answer)

    responders = {**summhay_responders.responders(), "summhay/insights": insights}
    llm = LLMSettings(backend="template", cache=tmp_path / "c.sqlite")
    found = {}
    for method in ("lexical", "embedding"):
        settings = SETTINGS.model_copy(update={"dedup": method, "dedup_cosine": 0.75})
        result = synthesize(LLMClient(llm, TemplateBackend(responders)), TOPIC, settings)
        found[method] = {d.item_id: d.detail for d in result.drops if d.step == "dedup"}
    assert found["lexical"] == {}
    assert found["embedding"] == {"S1.2": "repeats S1.1"}


def test_a_topic_without_any_insight_is_dropped_with_every_reason(tmp_path: Path) -> None:
    result, client = run(tmp_path, **{"summhay/insights": lambda v: '{"insights": ["", " "]}'})
    assert result.haystack is None
    drops = [(d.kind, d.item_id, d.step, d.reason) for d in result.drops]
    assert drops == [
        *[("subtopic", f"S{k}", "insights", "generation_failed") for k in (1, 2, 3)],
        ("topic", "t1", "plan", "unplannable"),
    ]
    # nothing is asked past the insights: no classification, document or query
    asked = client.stats()["by_prompt"]
    assert set(asked) == {"summhay/subtopics", "summhay/insights"}
