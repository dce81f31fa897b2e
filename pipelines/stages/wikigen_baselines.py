"""The ``wikigen_baselines`` stage: WikiGenBench's RR and PRR baselines and their citations.

Writes ``retrieval.parquet`` (per entry and reranker: the title's context and its reference
recall), ``articles.parquet`` (per entry, method and reranker: the article, its status and
scores, every sentence with its citations and verdicts), ``wikigen.json`` (DVC metrics) and
``stats.json``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from builders.wikigen.responders import responders
from pipelines.evaluation.wikigen import read_entries
from pipelines.evaluation.wikigen_baselines_settings import WikigenBaselines
from pipelines.evaluation.wikigen_judges import judge_name
from pipelines.evaluation.wikigen_scoring import (
    ReferenceMetrics,
    rerank_entries,
    rerankers,
    wikigen_metrics,
    write_and_judge,
)
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import write_json
from pipelines.retrieval.rankers import rankers
from pipelines.retrieval.settings import RetrievalSettings
from pipelines.retrieval.tokens import TokenCounter
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats


def run_wikigen_baselines(
    s: WikigenBaselines,
    *,
    entries: Path,
    chunks: Path,
    out: Path,
    llm: LLMSettings,
    retrieval: RetrievalSettings,
    embed_cache: Path | None = None,
) -> StageStats:
    """Rerank, write and judge over every entry; dense vectors are kept in the embedding cache
    at ``embed_cache`` (the embed stage's) when given."""
    with stage_run("wikigen_baselines", out, models=True) as run:
        counter = TokenCounter(retrieval.tokenizer)
        entry_list = read_entries(entries, chunks, counter.count, s.splits)
        ranks = rankers(rerankers(s), retrieval.seed, retrieval.dense_model, embed_cache)
        if s.generate:
            run.client = LLMClient.from_settings(llm, responders=responders())
        scratch = run.scratch
        reranked = rerank_entries(entry_list, ranks, s, scratch / "retrieval.parquet", run.stats)
        measure = ReferenceMetrics(s) if run.client is not None else None
        with measure or contextlib.nullcontext():
            articles = write_and_judge(
                run.client,
                entry_list,
                reranked,
                ranks,
                s,
                scratch / "articles.parquet",
                run.stats,
                measure,
            )
        answered = run.client is not None
        metrics = wikigen_metrics(
            entry_list,
            reranked,
            articles,
            s,
            counter,
            retrieval.dense_model,
            answered=answered,
            judged_by=judge_name(run.client) if run.client is not None else "",
            labels=measure.labels if measure is not None else None,
            corpus_meteor=measure.corpus if measure is not None else None,
        )
        write_json(scratch / "wikigen.json", metrics)
        run.stats.show(reference_recall=metrics["reference_recall"])
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    recall = ", ".join(f"{k} {v:.0f}" for k, v in stats.headline["reference_recall"].items())
    bare = stats.counts.get("entries_without_chunks", 0)
    note = f" ({bare} without chunks)" if bare else ""
    return (
        f"wikigen baselines: {stats.counts['entries']} entries{note}; reference recall by "
        f"reranker: {recall}; {stats.counts.get('articles_ok', 0)} articles written -> {out}/"
    )
