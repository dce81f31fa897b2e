"""The summhay_baselines stage on the snapshot's haystacks: contexts within budget, bounds,
scores."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders.summhay.records import CONTEXT_SCHEMA, SCORE_SCHEMA
from pipelines.dag.invoke import Workspace, run_stage
from pipelines.errors import MissingInputError
from pipelines.retrieval.tokens import TokenCounter
from pipelines.settings import Params
from pipelines.stages.summhay_baselines import run_summhay_baselines, summary
from pipelines.stats import StageStats
from tests.support.snapshot import ROOT


@pytest.fixture(scope="module")
def built_run(
    tmp_path_factory: pytest.TempPathFactory, params: Params, snapshot_haystacks: Path
) -> tuple[Path, Path, StageStats]:
    out = tmp_path_factory.mktemp("summhay-baselines") / "out"
    stats = run_summhay_baselines(
        params.summhay_baselines,
        haystacks=snapshot_haystacks,
        out=out,
        llm=params.llm,
        retrieval=params.resolved_retrieval(),
    )
    return snapshot_haystacks, out, stats


@pytest.fixture(scope="module")
def built(built_run: tuple[Path, Path, StageStats]) -> tuple[Path, Path]:
    haystacks, out, _ = built_run
    return haystacks, out


def test_the_summary_line_needs_only_the_stats(
    built_run: tuple[Path, Path, StageStats], tmp_path: Path
) -> None:
    _, out, stats = built_run
    metrics = json.loads((out / "summhay.json").read_text())
    assert stats.headline == {"coverage_bound": metrics["coverage_bound"]}
    bounds = ", ".join(f"{k} {v:.0f}" for k, v in metrics["coverage_bound"].items())
    assert summary(stats, tmp_path / "absent") == (
        f"summhay baselines: {stats.counts['summhay_contexts']} SummHay contexts; coverage bound "
        f"by retriever: {bounds} -> {tmp_path / 'absent'}/"
    )


def test_contexts_fit_the_budget_and_bounds_match_them(built, params: Params) -> None:
    haystacks_path, out = built
    contexts = pq.read_table(out / "summhay_contexts.parquet")
    assert contexts.schema.equals(CONTEXT_SCHEMA, check_metadata=False)
    budget = params.summhay_baselines.context_tokens
    texts = {
        d["document_id"] + r["topic_id"]: d["text"]
        for r in pq.read_table(haystacks_path).to_pylist()
        for d in r["documents"]
    }
    counter = TokenCounter()
    rows = contexts.to_pylist()
    retrievers = set(params.summhay_baselines.retrievers)
    assert {r["retriever"] for r in rows} == retrievers
    for row in rows:
        assert row["document_ids"] and row["context_tokens"] <= budget
        tokens = counter.count([texts[d + row["topic_id"]] for d in row["document_ids"]])
        assert sum(tokens) == row["context_tokens"]
    metrics = json.loads((out / "summhay.json").read_text())
    for name in retrievers:
        mine = [r for r in rows if r["retriever"] == name]
        expected = 100 * sum(r["reachable"] for r in mine) / sum(r["insights"] for r in mine)
        assert metrics["coverage_bound"][name] == pytest.approx(expected, abs=0.01)
    assert metrics["coverage_bound"]["oracle"] == 100.0
    assert all(v <= 100.0 for v in metrics["coverage_bound"].values())
    assert metrics["tokenizer"] == "sentence-transformers/all-MiniLM-L6-v2"


def test_every_context_is_summarized_judged_and_scored(built, params: Params) -> None:
    _, out = built
    scores = pq.read_table(out / "summhay_scores.parquet")
    assert scores.schema.equals(SCORE_SCHEMA, check_metadata=False)
    rows = scores.to_pylist()
    assert len(rows) == pq.read_table(out / "summhay_contexts.parquet").num_rows
    for row in rows:
        if row["status"] != "ok":
            assert row["reason"] and not row["verdicts"]
            continue
        assert len(row["verdicts"]) == row["insights"] == row["insights_scored"]
        # a covered insight is never counted beyond what the context could reach
        assert row["covered"] <= row["reachable"] or row["retriever"] == "oracle"
        assert 0 <= row["joint"] <= row["coverage"] <= 100
    metrics = json.loads((out / "summhay.json").read_text())
    assert metrics["metric_mode"] == params.summhay_baselines.metric_mode
    ok = [r for r in rows if r["status"] == "ok" and r["retriever"] == "oracle"]
    oracle = metrics["scores"]["oracle"]
    assert oracle["summaries"] == len(ok)
    assert oracle["coverage_per_summary_mean"] == pytest.approx(
        sum(r["coverage"] for r in ok) / len(ok), abs=0.01
    )
    # the pooled Coverage weighs each summary by its insights
    assert oracle["coverage"] == pytest.approx(
        sum(r["coverage"] * r["insights_scored"] for r in ok)
        / sum(r["insights_scored"] for r in ok),
        abs=0.01,
    )
    # the template summarizer cites in SummHay's form only
    assert all(r["unread_citations"] == 0 for r in rows if r["status"] == "ok")
    stats = json.loads((out / "stats.json").read_text())
    assert stats["llm"]["by_prompt"]["summhay/judge"]["asks"] == sum(
        len(r["verdicts"]) for r in rows
    )


def test_missing_haystacks_name_the_stage_to_run(tmp_path: Path, params: Params) -> None:
    where = Workspace(ROOT, ROOT / "params.yaml", data=tmp_path)
    with pytest.raises(MissingInputError, match="the summhay stage writes it: run 'dvc repro summ"):
        run_stage("summhay_baselines", params, where)
    assert not (tmp_path / "summhay_baselines").exists()


def summhay_figures(files: list[Path]) -> dict[str, dict[str, float]]:
    """Coverage, Citation and Joint per retriever, computed from the files alone the way
    SummHay's utils_eval.compute_full_results does (written here from its definitions): bullet
    b of a summary is line b; a citation [n] is the n-th document; pooled over insights."""
    pooled: dict[str, dict[str, list[float]]] = {}
    for path in files:
        topic = json.loads(path.read_text())
        gold: dict[str, set[int]] = {}
        for n, doc in enumerate(topic["documents"], 1):
            for insight in doc["insights_included"]:
                gold.setdefault(insight, set()).add(n)
        for sub in topic["subtopics"]:
            for key, lines in sub["summaries"].items():
                retriever = key.removeprefix("summary_subtopic_").split("_")[0]
                got = pooled.setdefault(retriever, {"coverage": [], "citation": [], "joint": []})
                for e in sub["eval_summaries"][key]:
                    cov = {"FULL_COVERAGE": 1.0, "PARTIAL_COVERAGE": 0.5}.get(e["coverage"], 0.0)
                    f1 = 0.0
                    if cov:
                        line = lines[int(e["bullet_id"]) - 1]
                        cited = {
                            int(x)
                            for group in re.findall(r"\[([\d, ]+)\]", line)
                            for x in group.split(",")
                            if x.strip()
                        }
                        hits = len(cited & gold[e["insight_id"]])
                        p = hits / len(cited) if cited else 0.0
                        r = hits / len(gold[e["insight_id"]])
                        f1 = 2 * p * r / (p + r) if p + r else 0.0
                        got["citation"].append(f1)
                    got["coverage"].append(cov)
                    got["joint"].append(cov * f1)
    return {
        name: {k: 100 * sum(v) / len(v) for k, v in scores.items() if v}
        for name, scores in pooled.items()
    }


def test_summhays_layout_of_our_results_gives_our_figures(built, params: Params) -> None:
    haystacks_path, out = built
    files = sorted((out / "official").glob("topic_*.json"))
    topics = pq.read_table(haystacks_path, columns=["topic_id"]).column(0).to_pylist()
    assert [p.name for p in files] == sorted(f"topic_{t}.json" for t in topics)
    retrievers = set(params.summhay_baselines.retrievers)
    for path in files:
        topic = json.loads(path.read_text())
        ids = {d["document_id"] for d in topic["documents"]}
        for sub in topic["subtopics"]:
            assert set(sub["retriever"]) == retrievers
            assert all(set(scores) == ids for scores in sub["retriever"].values())
    metrics = json.loads((out / "summhay.json").read_text())["scores"]
    figures = summhay_figures(files)
    assert set(figures) == set(metrics)
    for name, theirs in figures.items():
        for key, value in theirs.items():
            assert metrics[name][key] == pytest.approx(value, abs=0.005), (name, key)


def test_degenerate_haystacks_are_kept_failed_and_the_others_score_as_before(
    built, params: Params, tmp_path: Path
) -> None:
    haystacks, full = built
    table = pq.read_table(haystacks)
    rows = table.to_pylist()
    empty = {**rows[0], "topic_id": "x-empty", "documents": []}
    empty["subtopics"] = [
        {**s, "insights": [{**i, "gold_document_ids": []} for i in s["insights"]]}
        for s in rows[0]["subtopics"]
    ]
    bare = {**rows[0], "topic_id": "x-bare"}
    bare["subtopics"] = [{**rows[0]["subtopics"][0], "insights": []}, *rows[0]["subtopics"][1:]]
    degenerate = tmp_path / "haystacks.parquet"
    pq.write_table(pa.Table.from_pylist([*rows, empty, bare], schema=table.schema), degenerate)
    settings = params.summhay_baselines.model_copy(
        update={"retrievers": ["random", "keywords", "bm25", "oracle"]}
    )
    llm = params.llm.model_copy(update={"cache": tmp_path / "llm.sqlite"})
    out = tmp_path / "out"
    stats = run_summhay_baselines(
        settings, haystacks=degenerate, out=out, llm=llm, retrieval=params.resolved_retrieval()
    )

    good = {r["topic_id"] for r in rows}
    for name in ("summhay_contexts", "summhay_scores"):
        before = [r for r in pq.read_table(full / f"{name}.parquet").to_pylist()
                  if r["retriever"] in settings.retrievers]  # fmt: skip
        after = pq.read_table(out / f"{name}.parquet").to_pylist()
        assert [r for r in after if r["topic_id"] in good] == before
    scores = pq.read_table(out / "summhay_scores.parquet").to_pylist()
    failed = {(r["topic_id"], r["subtopic_id"]): r["reason"] for r in scores
              if r["status"] == "failed"}  # fmt: skip
    subtopics = [s["subtopic_id"] for s in rows[0]["subtopics"]]
    assert {k for k, why in failed.items() if why.startswith("no_documents:")} == {
        ("x-empty", s) for s in subtopics
    }
    assert {k for k, why in failed.items() if why.startswith("no_insights:")} == {
        ("x-bare", subtopics[0])
    }
    assert stats.counts["summhay_haystacks_without_documents"] == 1
    assert stats.counts["summhay_subtopics_without_insights"] == 1
    n = len(settings.retrievers)
    assert stats.dropped == {"summary_no_documents": n * len(subtopics), "summary_no_insights": n}
    asked = json.loads((out / "stats.json").read_text())["llm"]["by_prompt"]["summhay/summarize"]
    assert asked["asks"] == sum(r["status"] == "ok" for r in scores)  # no failed one was asked
    assert json.loads((out / "official" / "topic_x-empty.json").read_text())["documents"] == []
    assert "(1 haystacks without documents, 1 subtopics without insights)" in summary(stats, out)
