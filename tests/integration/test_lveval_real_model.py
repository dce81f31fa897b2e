"""LV-Eval's QA step through a real OpenAI-compatible server: SmolLM2-135M-Instruct behind the
schema-enforcing test server on 127.0.0.1. With ``response_format: json_schema`` every answer
parses and matches its schema; the model is still weak (it misquotes passages, restates the
true answer, proposes names that are not there), so the checks reject much of what it writes.
The stage must finish, keep only items whose quotes and answers check out, give every dropped
item a step and a reason, and answer a second run from the cache without a single call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders.lveval.passages import entry_passages
from builders.lveval.settings import HubSource
from builders.lveval.text import mentions
from pipelines.settings import Params
from pipelines.stages.lveval import run_lveval
from tests.support.llm_cache import unusable_answers
from tests.support.smollm import SmolLMServer, llm_settings

pytestmark = pytest.mark.integration

EVENTS = 2
"""Events asked about (each event's passages also fill the 2k-word contexts)."""
LOCAL = {
    "q": ["Who chaired the Ostrel inquiry?", "How many cars did the ferry carry?"],
    "ans": [["Ilse Marten"], ["80"]],
    "ctx": [
        "The Ostrel inquiry met in May. It was chaired by Ilse Marten of Korvenna.",
        "The ferry was painted deep blue. It carried 80 cars on its last crossing.",
    ],
}
"""A local QA set: items that need no model-written question, so the confusing-fact and
replacement asks always run."""


def _rows(path: Path) -> list[dict[str, Any]]:
    return pq.read_table(path).to_pylist()


def test_qa_items_from_a_real_model_parse_are_checked_and_cached(
    server: SmolLMServer, snapshot_entries: Path, params: Params, tmp_path: Path
) -> None:
    entries = tmp_path / "entries.parquet"
    pq.write_table(pq.read_table(snapshot_entries).slice(0, EVENTS), entries)
    (tmp_path / "local").mkdir()
    pq.write_table(pa.table(LOCAL), tmp_path / "local" / "test.parquet")
    local = HubSource(
        path=str(tmp_path / "local"), dataset="local_mixup", question="q", answers="ans",
        context="ctx",
    )  # fmt: skip
    events = params.lveval.events.model_copy(
        update={"questions_per_event": 1, "multi_hop_per_event": 0, "max_prompt_words": 400}
    )
    update = {"levels": ["2k"], "events": events, "hub_sources": [local]}
    settings = params.lveval.model_copy(update=update)
    llm = llm_settings(server, tmp_path / "llm.sqlite", max_tokens=300)

    stats = run_lveval(settings, entries=entries, out=tmp_path / "first", llm=llm)

    saved = json.loads((tmp_path / "first" / "stats.json").read_text())
    block = saved["llm"]
    assert block["backend"] == "openai" and block["response_format"] == "json_schema"
    assert block["calls"] > 0 and block["prompt_tokens"] > 0 and block["completion_tokens"] > 0
    # the schema is enforced: every answer parses; what the checks reject is counted apart
    assert block["parsed"] > 0 and block["malformed"] == 0
    for name, counts in block["by_prompt"].items():
        assert counts["malformed"] == 0, name
        assert sum((counts.get("check_reasons") or {}).values()) == counts["failed_checks"]
    assert "call_failed" not in block["failure_reasons"], block["failure_reasons"]
    by_prompt = block["by_prompt"]
    assert by_prompt["lveval/questions"]["parsed"] >= EVENTS
    assert by_prompt["lveval/confusing_fact"]["parsed"] >= len(LOCAL["q"])

    drops = _rows(tmp_path / "first" / "drops.parquet")
    assert all(d["step"] and d["reason"] and d["detail"] for d in drops)
    assert sum(stats.dropped.values()) == len(drops)
    failed = {d["item_id"] for d in drops if d["step"] == "questions"}
    assert failed <= {e["event_id"] for e in _rows(entries)}

    passages = {
        p.passage_id: p.text
        for entry in _rows(entries)
        for p in entry_passages(entry, settings.passage_words)
    }
    passages.update({f"local_mixup:{n}:0": text for n, text in enumerate(LOCAL["ctx"])})
    items = _rows(tmp_path / "first" / "qa.parquet")
    assert stats.counts["qa_items"] == len(items)
    for item in items:  # only checked items: quotes found verbatim, answers in the quotes
        assert item["question"] and item["answers"] and item["evidence"]
        for quote in item["evidence"]:
            assert quote["text"] in passages[quote["passage_id"]]
        quoted = " ".join(q["text"] for q in item["evidence"])
        assert all(mentions(quoted, a) for a in item["answers"])
    records = [r for f in (tmp_path / "first" / "records").glob("*.parquet") for r in _rows(f)]
    assert len(records) == 4 * len(items)  # each kept item in four variants, a fact in two
    assert all(r["confusing_facts"] for r in records if "cfi" in r["variant"])

    bad = unusable_answers(tmp_path / "llm.sqlite")  # cut at max_tokens, or rejected
    again = run_lveval(settings, entries=entries, out=tmp_path / "again", llm=llm)
    rerun = json.loads((tmp_path / "again" / "stats.json").read_text())["llm"]
    assert rerun["calls"] == bad  # only the answers the cache will not serve go again
    assert rerun["cache_hits"] == block["calls"] - block["retries"] - bad
    assert again.counts == stats.counts
    for name in ("qa.parquet", "drops.parquet"):
        assert pq.read_table(tmp_path / "again" / name).equals(
            pq.read_table(tmp_path / "first" / name)
        )
