"""The wikigen_baselines stage on the snapshot: contexts, RR and PRR articles, judged citations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipelines.dag.invoke import Workspace, run_stage
from pipelines.errors import MissingInputError
from pipelines.evaluation.wikigen import ARTICLE_SCHEMA, RETRIEVAL_SCHEMA
from pipelines.evaluation.wikigen_baselines_settings import WikigenBaselines
from pipelines.retrieval.tokens import TokenCounter
from pipelines.settings import Params
from pipelines.stages.wikigen_baselines import run_wikigen_baselines, summary
from tests.pipelines.llm.conftest import settings_for
from tests.pipelines.publish.conftest import DENSE_VECTORS
from tests.support.openai_server import openai_server
from tests.support.snapshot import ROOT


@pytest.fixture(scope="module")
def inputs(snapshot_entries: Path, snapshot_chunks: Path) -> tuple[Path, Path]:
    """Entries and the chunks of their web documents."""
    return snapshot_entries, snapshot_chunks


def run(params: Params, settings: WikigenBaselines, inputs, out: Path, llm, embed_cache=None):
    """The wikigen_baselines stage on ``inputs`` (entries, chunks) with the snapshot's retrieval
    settings."""
    entries, chunks = inputs
    return run_wikigen_baselines(
        settings,
        entries=entries,
        chunks=chunks,
        out=out,
        llm=llm,
        retrieval=params.resolved_retrieval(),
        embed_cache=embed_cache,
    )


@pytest.fixture(scope="module")
def built(
    inputs, params: Params, publish_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The stage on the snapshot with its own settings; its dense vectors come from the
    embedding cache the publish fixtures' RR run filled (the same chunks, the same encoder)."""
    tmp = tmp_path_factory.mktemp("wikigen-baselines-out")
    llm = params.llm.model_copy(update={"cache": tmp / "llm.sqlite"})
    vectors = publish_data.parent / DENSE_VECTORS
    run(params, params.wikigen_baselines, inputs, tmp / "out", llm, embed_cache=vectors)
    return tmp / "out"


def test_contexts_fit_budget_and_top_k_and_come_from_the_entry(inputs, built, params) -> None:
    entries_path, chunks_path = inputs
    s = params.wikigen_baselines
    table = pq.read_table(built / "retrieval.parquet")
    assert table.schema.equals(RETRIEVAL_SCHEMA, check_metadata=False)
    rows = table.to_pylist()
    entries = pq.read_table(entries_path).to_pylist()
    assert len(rows) == len(entries) * len(s.retrievers)
    chunks = {c["chunk_id"]: c for c in pq.read_table(chunks_path).to_pylist()}
    own = {e["event_id"]: {d["doc_id"] for d in e["documents"]} for e in entries}
    counter = TokenCounter()
    for row in rows:
        assert 0 < len(row["chunk_ids"]) <= s.top_k
        assert row["context_tokens"] <= s.context_tokens
        assert {chunks[c]["document_id"] for c in row["chunk_ids"]} <= own[row["event_id"]]
        assert (
            sum(counter.count([chunks[c]["text"] for c in row["chunk_ids"]]))
            == row["context_tokens"]
        )
        assert 0 <= row["reference_recall"] <= 1
    metrics = json.loads((built / "wikigen.json").read_text())
    for name in s.retrievers:
        mine = [r["reference_recall"] for r in rows if r["retriever"] == name]
        assert metrics["reference_recall"][name] == pytest.approx(
            100 * sum(mine) / len(mine), abs=0.01
        )
    # rerankers differ: at least two order some entry's chunks differently
    by_retriever = {n: [r["chunk_ids"] for r in rows if r["retriever"] == n] for n in s.retrievers}
    assert len({json.dumps(v) for v in by_retriever.values()}) > 1


def test_every_article_is_written_judged_and_scored(built, inputs, params) -> None:
    s = params.wikigen_baselines
    table = pq.read_table(built / "articles.parquet")
    assert table.schema.equals(ARTICLE_SCHEMA, check_metadata=False)
    rows = table.to_pylist()
    kinds = {(r["method"], r["retriever"]) for r in rows}
    assert kinds == {("rr", n) for n in s.retrievers} | {("prr", s.prr_retriever)}
    for row in rows:
        assert row["status"] == "ok", row["reason"]
        assert row["sentences"] == len(row["claims"]) > 0
        # every citation resolves to a chunk the writer was shown
        cited = {c for claim in row["claims"] for c in claim["cited"]}
        assert cited <= set(row["chunk_ids"])
        recall = sum(any(c["supported"]) for c in row["claims"]) / len(row["claims"])
        assert row["citation_recall"] == pytest.approx(recall)
        assert 0 <= row["citation_precision"] <= row["citation_recall"] <= 1
        assert 0 < row["rouge_l"] < 1
    prr = [r for r in rows if r["method"] == "prr"]
    assert all(len(r["outline"]) > 1 and r["sections"] == len(r["outline"]) for r in prr)
    assert all(f"=={r['outline'][1]}==" in r["article"] for r in prr)
    stats = json.loads((built / "stats.json").read_text())
    judged = sum(len(c["cited"]) for r in rows for c in r["claims"] if c["cited"])
    assert stats["llm"]["by_prompt"]["wikigen/entails"]["asks"] == judged
    metrics = json.loads((built / "wikigen.json").read_text())
    mine = [r for r in rows if r["method"] == "rr" and r["retriever"] == "bm25"]
    assert metrics["articles"]["rr"]["bm25"]["articles"] == len(mine)
    assert metrics["articles"]["rr"]["bm25"]["citation_rate"] == pytest.approx(
        100 * sum(r["citation_rate"] for r in mine) / len(mine), abs=0.01
    )
    # the judged scores (template stand-ins here) and STORM's outline metrics, per article
    assert metrics["judged_by"].startswith("template stand-ins")
    assert metrics["heading_encoder"] and "not NER" in metrics["heading_entities"]
    entries = {e["event_id"]: e for e in pq.read_table(inputs[0]).to_pylist()}
    for row in rows:
        for name in ("fluency", "info", "outline", "organization", "focus", "coverage"):
            assert row[f"{name}_score"] is not None and row["failed_scores"] == []
        if entries[row["event_id"]]["outline"]:
            assert 0 <= row["heading_entity_recall"] <= 1 and row["heading_soft_recall"] >= 0
    # METEOR: each article's from the jar; the group's figure is the jar's aggregate (NLG-eval's)
    assert metrics["meteor_by"].startswith("METEOR 1.5 jar")
    assert all(0 < r["meteor"] < 1 for r in rows)
    group = metrics["articles"]["rr"]["bm25"]
    assert group["meteor_mean"] == pytest.approx(
        100 * sum(r["meteor"] for r in mine) / len(mine), abs=0.01
    )
    assert 0 < group["meteor"] < 100 and group["meteor"] != group["meteor_mean"]
    soft = [r["heading_soft_recall"] for r in mine if r["heading_soft_recall"] is not None]
    assert metrics["articles"]["rr"]["bm25"]["heading_soft_recall"] == pytest.approx(
        100 * sum(soft) / len(soft), abs=0.01
    )


def _good(body: dict[str, Any], n: int) -> str:
    prompt = body["messages"][-1]["content"]
    if "Does the document entail" in prompt:
        return '{"entails": true}'
    if "write an outline" in prompt:
        return "1. Introduction\n2. Impact"
    if "Evaluate an encyclopedia text" in prompt:
        return "Fluency: 4, Informativeness: 3, Faithfulness: 5"
    if "quality of the outline" in prompt:
        return "3"
    if "###Score Rubrics:" in prompt:
        return "Clear and on topic. [RESULT] 4"
    return "==Overview==\nThe event happened.[1] It was reported widely.[2]"


def _small(params: Params) -> WikigenBaselines:
    """One reranker, and no METEOR (its jar takes 5 s to start; the module's build checks it)."""
    return params.wikigen_baselines.model_copy(
        update={"retrievers": ["bm25"], "prr_retriever": "bm25", "meteor": False}
    )


def test_a_rerun_asks_the_model_nothing_again(inputs, params, tmp_path: Path) -> None:
    with openai_server(_good) as (url, seen):
        llm = settings_for(url, tmp_path)
        run(params, _small(params), inputs, tmp_path / "first", llm)
        first = seen.count
        run(params, _small(params), inputs, tmp_path / "again", llm)
    assert first > 0 and seen.count == first
    stats = json.loads((tmp_path / "again" / "stats.json").read_text())["llm"]
    # asks repeated within a run (a sentence and a chunk met twice) were cache hits already
    assert stats["calls"] == 0 and stats["cache_hits"] == stats["asks"] >= first
    assert (tmp_path / "again" / "articles.parquet").read_bytes() == (
        tmp_path / "first" / "articles.parquet"
    ).read_bytes()


def _reply(body: dict[str, Any], n: int) -> str:
    """A model that writes without citations for one topic, a list-free outline, and judges
    in prose."""
    prompt = body["messages"][-1]["content"]
    if "Does the document entail" in prompt:
        return "Yes, it does." if n % 2 else '{"entails": true}'
    if "write an outline" in prompt:
        return "Sections should cover the storm and its aftermath."
    if '"Cyclone Imre"' in prompt:
        return "==Overview==\n"
    return "==Overview==\nThe event happened.[1] It was reported widely.[2][99]"


def test_bad_model_output_is_kept_with_a_reason(inputs, params, tmp_path: Path) -> None:
    with openai_server(_reply) as (url, _):
        llm = settings_for(url, tmp_path, reasks=0)
        stats = run(params, _small(params), inputs, tmp_path / "out", llm)
    rows = pq.read_table(tmp_path / "out" / "articles.parquet").to_pylist()
    prr = [r for r in rows if r["method"] == "prr"]
    assert prr and all(r["status"] == "failed" and "outline" in r["reason"] for r in prr)
    imre = next(r for r in rows if r["title"] == "Cyclone Imre" and r["method"] == "rr")
    assert imre["status"] == "failed" and "no sentences" in imre["reason"]
    written = [r for r in rows if r["method"] == "rr" and r["status"] == "ok"]
    assert written
    for row in written:
        # [99] names no chunk: kept as an unknown citation that supports nothing
        assert row["claims"][1]["cited"][-1] == "" and row["claims"][1]["supported"][-1] is False
    citations = ("citation_recall", "citation_precision", "citation_rate")
    # a verdict in prose (no JSON, no re-ask) failed: no verdict, so the article's citation
    # scores are failed scores with the reason, never computed as if it were unsupported
    unjudged = [r for r in written if "judge answers failed" in r["reason"]]
    judged = [r for r in written if not r["reason"]]
    assert unjudged and judged
    for row in unjudged:
        assert None in [m for claim in row["claims"] for m in claim["supported"]]
        assert [row[c] for c in citations] == [None] * 3
        failed = {f["score"]: f["reason"] for f in row["failed_scores"]}
        assert set(citations) <= set(failed)
        assert "citation verdicts failed, first: invalid_answer" in failed["citation_recall"]
        assert row["rouge_l"] is not None  # the other scores stand
    for row in judged:
        assert row["citation_precision"] < 1
    assert stats.dropped and sum(stats.dropped.values()) == len(rows) - len(written)
    metrics = json.loads((tmp_path / "out" / "wikigen.json").read_text())
    rr = metrics["articles"]["rr"]["bm25"]
    assert rr["citation_failed"] == len(unjudged)
    mean = sum(r["citation_recall"] for r in judged) / len(judged)
    assert rr["citation_recall"] == round(100 * mean, 2)
    assert stats.headline == {"reference_recall": metrics["reference_recall"]}
    recall = ", ".join(f"{k} {v:.0f}" for k, v in metrics["reference_recall"].items())
    assert summary(stats, tmp_path / "absent") == (
        f"wikigen baselines: {metrics['entries']} entries; reference recall by reranker: "
        f"{recall}; {len(written)} articles written -> {tmp_path / 'absent'}/"
    )


def test_missing_or_chunkless_inputs_name_what_to_run(inputs, params, tmp_path: Path) -> None:
    entries, chunks = inputs
    settings = params.wikigen_baselines
    with pytest.raises(MissingInputError, match="the chunk stage writes it: run 'dvc repro chunk'"):
        run_stage(
            "wikigen_baselines",
            params,
            Workspace(ROOT, ROOT / "params.yaml"),
            entries=entries,
            chunks=tmp_path / "none.parquet",
            out=tmp_path / "out",
        )
    summhay_only = tmp_path / "chunks.parquet"
    table = pq.read_table(chunks)
    pq.write_table(table.filter(pc.not_equal(table["corpus"], "web")), summhay_only)
    with pytest.raises(MissingInputError, match=r"add 'web' to chunk\.corpora"):
        run(params, settings, (entries, summhay_only), tmp_path / "out", params.llm)
    assert not (tmp_path / "out").exists()


def test_an_entry_without_documents_is_kept_failed_and_the_others_are_as_before(
    inputs, built, params, tmp_path: Path
) -> None:
    entries, chunks = inputs
    table = pq.read_table(entries)
    rows = table.to_pylist()[:2]
    bare = rows[1] | {"event_id": "x:bare", "title": "Undocumented floods", "documents": []}
    degenerate = tmp_path / "entries.parquet"
    pq.write_table(pa.Table.from_pylist([*rows, bare], schema=table.schema), degenerate)
    settings = params.wikigen_baselines.model_copy(
        update={"retrievers": ["random", "bm25"], "prr_retriever": "bm25", "meteor": False}
    )
    llm = params.llm.model_copy(update={"cache": tmp_path / "llm.sqlite"})
    stats = run(params, settings, (degenerate, chunks), tmp_path / "out", llm)

    def rows_of(folder: Path, name: str, events: set[str]) -> list[dict[str, Any]]:
        found = pq.read_table(folder / f"{name}.parquet").to_pylist()
        return [
            {k: v for k, v in r.items() if k != "meteor"}  # not measured here
            for r in found
            if r["event_id"] in events
            and r["retriever"] in settings.retrievers
            and r.get("method", "rr") == "rr"
        ]

    # the two good entries: the same contexts and RR articles as the full run of the module
    good = {r["event_id"] for r in rows}
    for name in ("retrieval", "articles"):
        assert rows_of(tmp_path / "out", name, good) == rows_of(built, name, good)
    # the entry without documents: empty contexts, every article failed with the reason
    empty = rows_of(tmp_path / "out", "retrieval", {"x:bare"})
    assert [(r["chunk_ids"], r["reference_recall"]) for r in empty] == [([], 0.0)] * 2
    articles = pq.read_table(tmp_path / "out" / "articles.parquet").to_pylist()
    failed = [r for r in articles if r["event_id"] == "x:bare"]
    assert [(r["method"], r["retriever"], r["status"]) for r in failed] == [
        ("rr", "random", "failed"),
        ("rr", "bm25", "failed"),
        ("prr", "bm25", "failed"),
    ]
    assert all(r["reason"].startswith("no_chunks:") for r in failed)
    assert stats.counts["entries_without_chunks"] == 1 and stats.dropped == {"article_no_chunks": 3}
    assert "3 entries (1 without chunks);" in summary(stats, tmp_path / "out")
