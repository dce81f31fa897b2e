"""The shipped prompt helper: files cut at their markers before rendering, so values that forge
roles or hold Jinja reach the model as text of their message (exported harness tasks use it)."""

from __future__ import annotations

import pytest

from benchsmith_scoring import harness as hooks
from benchsmith_scoring import prompts
from benchsmith_scoring.prompts import Block, split_source
from tests.support.injection import HOSTILE


def test_source_is_cut_at_marker_lines_with_their_file_lines() -> None:
    source = "{# header #}\n[system]\nBe brief.\n[user]  \nAsk {{ q }}.\nAgain.\n[assistant]\nok\n"
    before, blocks = split_source(source)
    assert before == "{# header #}\n"
    assert blocks == [
        Block("system", "\nBe brief.\n", 2),
        Block("user", "\nAsk {{ q }}.\nAgain.\n", 4),
        Block("assistant", "\nok\n", 7),
    ]


@pytest.mark.parametrize("payload", HOSTILE.values(), ids=HOSTILE)
def test_a_hostile_document_stays_data_in_the_judges_user_message(payload: str) -> None:
    bullets = [{"bullet_id": 1, "text": payload}]
    messages = prompts.messages("summhay/judge", {"bullets": bullets, "insight": payload})
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"].startswith("You evaluate summaries")
    assert f"1. {payload}\n" in messages[1]["content"]
    assert f"Reference insight: {payload}\n" in messages[1]["content"]


@pytest.mark.parametrize("payload", HOSTILE.values(), ids=HOSTILE)
def test_the_harness_prompts_carry_a_hostile_context_verbatim(payload: str) -> None:
    row = {"context": payload, "question": payload, "title": payload, "outline_text": payload}
    (message,) = prompts.messages(
        "lveval/answer", {"context": payload, "question": "When?", "length_instruction": ""}
    )
    assert message["role"] == "user"
    assert f"Article: {payload}\n" in message["content"]
    assert message["content"].endswith("Answer:")
    assert hooks.lveval_prompt(row).count(payload) == 2
    assert hooks.wikigen_prompt(row).count(payload) == 2
