"""WikiGenBench's RR baseline through a real OpenAI-compatible server: SmolLM2-135M-Instruct
behind the schema-enforcing test server on 127.0.0.1. The article is prose; the entailment
judge answers JSON held to its schema, so every judgement parses. The model is weak: it may
forget citations or cite documents that do not exist. The stage must finish, keep every article
with a status and reason, and resolve only citations of chunks it showed; a second run is
answered from the cache without a single call."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.settings import Params
from pipelines.stages.wikigen_baselines import run_wikigen_baselines
from tests.support.llm_cache import unusable_answers
from tests.support.smollm import SmolLMServer, llm_settings

pytestmark = pytest.mark.integration


def test_rr_articles_from_a_real_model_are_kept_judged_and_cached(
    server: SmolLMServer, snapshot_entries: Path, snapshot_chunks: Path, params: Params,
    tmp_path: Path,
) -> None:  # fmt: skip
    entries = tmp_path / "entries.parquet"
    pq.write_table(pq.read_table(snapshot_entries).slice(0, 2), entries)
    # each kind of judge once (a score line, an outline number, a Prometheus grade), no METEOR
    # or outline metrics (no model there; the stage tests check them)
    small = {
        "retrievers": ["bm25"], "methods": ["rr"], "top_k": 2, "context_tokens": 700,
        "judge_scores": ["fluency", "info", "outline", "focus"], "meteor": False,
        "outline_metrics": False,
    }  # fmt: skip
    settings = params.wikigen_baselines.model_copy(update=small)
    llm = llm_settings(server, tmp_path / "llm.sqlite", max_tokens=160)

    def run(out: Path) -> None:
        run_wikigen_baselines(
            settings, entries=entries, chunks=snapshot_chunks, out=out, llm=llm,
            retrieval=params.resolved_retrieval(),
        )  # fmt: skip

    run(tmp_path / "first")
    rows = pq.read_table(tmp_path / "first" / "articles.parquet").to_pylist()
    assert len(rows) == 2
    for row in rows:
        if row["status"] != "ok":
            assert row["reason"] and not row["claims"]
            continue
        assert row["article"] and row["sentences"] == len(row["claims"]) > 0
        for claim in row["claims"]:
            assert set(claim["cited"]) - {""} <= set(row["chunk_ids"])
            assert len(claim["supported"]) == len(claim["cited"])
        assert 0 <= row["citation_precision"] <= row["citation_recall"] <= 1
        # schema-bounded judge answers: every asked score is there, in its range
        assert row["failed_scores"] == []
        assert 0 <= row["fluency_score"] <= 5 and 0 <= row["outline_score"] <= 5
        assert 1 <= row["focus_score"] <= 5 and row["coverage_score"] is None
    first = json.loads((tmp_path / "first" / "stats.json").read_text())["llm"]
    assert first["calls"] > 0 and first["backend"] == "openai"
    assert first["response_format"] == "json_schema"
    assert first["parsed"] > 0 and first["malformed"] == 0
    assert all(counts["malformed"] == 0 for counts in first["by_prompt"].values())
    # a call that failed (a timeout on a busy machine) would be asked again by the second run
    assert "call_failed" not in first["failure_reasons"], first["failure_reasons"]

    bad = unusable_answers(tmp_path / "llm.sqlite")
    run(tmp_path / "again")
    again = json.loads((tmp_path / "again" / "stats.json").read_text())["llm"]
    # only the answers the cache will not serve (cut at max_tokens, rejected) go again
    assert again["calls"] == bad and again["cache_hits"] >= again["asks"] - bad
    assert (tmp_path / "again" / "articles.parquet").read_bytes() == (
        tmp_path / "first" / "articles.parquet"
    ).read_bytes()
