"""SummHay synthesis through a real OpenAI-compatible server: SmolLM2-135M-Instruct behind the
schema-enforcing test server on 127.0.0.1. With ``response_format: json_schema`` every answer
parses and matches its schema, but the model is weak: it repeats itself and misses facts, so
content checks reject much of what it writes. The stage must finish, record every failure with
a reason, and write only verified items; a second run is answered from the cache without a
single call."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from builders.summhay.plan import plan_documents
from builders.summhay.records import Haystack, Insight, Subtopic, Topic
from builders.summhay.settings import SummhaySettings
from pipelines.llm import LLMClient
from pipelines.stages.summhay import run_summhay
from pipelines.synthesis.summhay_documents import write_documents
from pipelines.synthesis.summhay_outcome import Synthesis
from tests.support.llm_cache import unusable_answers
from tests.support.smollm import SmolLMServer, llm_settings

pytestmark = pytest.mark.integration

TOPIC = {
    "topic_id": "exam",
    "domain": "conversation",
    "topic": "Three students plan how to prepare for their final statistics exam",
    "participants": ["Ayla", "Bram", "Chidi"],
}


def assert_every_answer_parsed(block: dict[str, Any]) -> None:
    """The schema is enforced: no answer is malformed, content checks count their reasons,
    and no call failed (a slow machine waits, it does not time out)."""
    assert block["response_format"] == "json_schema"
    assert block["parsed"] > 0 and block["malformed"] == 0
    for name, counts in block["by_prompt"].items():
        assert counts["malformed"] == 0, name
        assert sum((counts.get("check_reasons") or {}).values()) == counts["failed_checks"]
    assert "call_failed" not in block["failure_reasons"], block["failure_reasons"]


def test_tiny_synthesis_finishes_records_failures_and_keeps_only_verified_items(
    server: SmolLMServer, tmp_path: Path
) -> None:
    settings = SummhaySettings(
        topics=[TOPIC],
        subtopics=2,
        insights_per_subtopic=3,
        documents=6,
        words_per_document=60,
        max_insights_per_subtopic=3,
        document_attempts=2,
    )
    llm = llm_settings(server, tmp_path / "llm.sqlite")
    out = tmp_path / "first"
    stats = run_summhay(
        settings,
        articles=tmp_path / "absent.parquet",
        documents=tmp_path / "absent.parquet",
        out=out,
        llm=llm,
    )

    saved = json.loads((out / "stats.json").read_text())
    assert saved["llm"]["backend"] == "openai" and saved["llm"]["calls"] > 0
    assert saved["llm"]["prompt_tokens"] > 0 and saved["llm"]["completion_tokens"] > 0
    assert_every_answer_parsed(saved["llm"])
    drops = pq.read_table(out / "drops.parquet").to_pylist()
    assert all(d["reason"] and d["detail"] and d["step"] for d in drops)
    assert sum(stats.dropped.values()) == len(drops)
    # whatever the model got wrong is accounted for: failed asks show up as drops
    assert saved["llm"]["failed"] == 0 or drops
    haystacks = [Haystack.from_row(r) for r in pq.read_table(out / "haystacks.parquet").to_pylist()]
    assert len(haystacks) + sum(d["kind"] == "topic" for d in drops) == 1
    for h in haystacks:  # only verified items: every insight has documents that carry it
        assert h.insights and h.documents
        known = {i.insight_id for i in h.insights}
        for d in h.documents:
            assert set(d.insight_ids) <= known
        assert all(h.gold(i.insight_id) for i in h.insights)
        assert all(s.query for s in h.subtopics)

    # a second run asks only what the cache will not serve (answers cut at max_tokens or
    # rejected by a check, sent again); every other answer comes from the cache
    bad = unusable_answers(tmp_path / "llm.sqlite")
    again = tmp_path / "second"
    run_summhay(
        settings,
        articles=tmp_path / "absent.parquet",
        documents=tmp_path / "absent.parquet",
        out=again,
        llm=llm,
    )
    rerun = json.loads((again / "stats.json").read_text())["llm"]
    assert rerun["calls"] == bad
    assert rerun["cache_hits"] == saved["llm"]["calls"] - saved["llm"]["retries"] - bad
    for name in ("haystacks.parquet", "drops.parquet"):
        assert pq.read_table(again / name).equals(pq.read_table(out / name))


def test_documents_are_written_and_checked_both_ways_by_the_real_model(
    server: SmolLMServer, tmp_path: Path
) -> None:
    topic = Topic(TOPIC["topic_id"], "conversation", TOPIC["topic"], ("Ayla", "Bram"))
    subtopics = [
        Subtopic("S1", "Study schedule", "when they meet"),
        Subtopic("S2", "Budget", "costs"),
    ]
    insights = [
        Insight("S1.1", "S1", "Ayla booked room 214 of the library for every Tuesday at 6 pm."),
        Insight("S1.2", "S1", "Bram wants to finish 12 practice exams before 3 June."),
        Insight("S2.1", "S2", "The group spent 48 euros on the Statistica textbook."),
        Insight("S2.2", "S2", "Bram pays 15 euros a month for the Quizlet app."),
    ]
    settings = SummhaySettings(words_per_document=50, document_attempts=2, subtopics=2)
    plans = plan_documents(
        subtopics,
        insights,
        documents=3,
        subtopics_per_document=2,
        max_insights=1,
        rng=random.Random(1),
    )
    client = LLMClient.from_settings(llm_settings(server, tmp_path / "llm.sqlite", max_tokens=150))
    result = Synthesis(topic)
    base = {
        "topic_id": topic.topic_id,
        "topic": topic.topic,
        "domain": topic.domain,
        "participants": ["Ayla", "Bram"],
    }
    kept = write_documents(client, result, base, plans, insights, settings, random.Random(2))

    assert_every_answer_parsed(client.stats())
    stats = client.stats()["by_prompt"]
    assert stats["summhay/document"]["calls"] >= len(plans), (
        "each document was written by the model"
    )
    assert stats["summhay/inclusion"]["asks"] >= len(kept)
    dropped = {d.item_id: d for d in result.drops}
    assert set(dropped) | {d.document_id for d in kept} == {p.document_id for p in plans}
    assert not set(dropped) & {d.document_id for d in kept}
    for d in kept:  # kept documents were judged to carry exactly their plan
        plan = next(p for p in plans if p.document_id == d.document_id)
        assert d.insight_ids == plan.insight_ids and d.text and 1 <= d.attempts <= 2
    for drop in dropped.values():
        assert (drop.kind, drop.step, drop.reason) == (
            "document",
            "inclusion",
            "failed_verification",
        )
        assert drop.detail.startswith(
            ("missing planned", "carries unplanned", "inclusion check failed", "invalid_answer")
        )
    # a failing document is generated again, with the reason, before it is dropped
    expected = sum(d.attempts for d in kept) + len(dropped) * settings.document_attempts
    assert stats["summhay/document"]["asks"] == expected
