"""The ``wikigen_baselines`` stage: WikiGenBench's RR and PRR baselines and their citations.

Writes ``retrieval.parquet`` (per entry and reranker: the title's context and its reference
recall), ``articles.parquet`` (per entry, method and reranker: the article, its status and
scores, every sentence with its citations and verdicts), ``wikigen.json`` (DVC metrics) and
``stats.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import fmean
from typing import Any

from builders.wikigen.responders import responders
from pipelines.embed.models import display_name
from pipelines.evaluation.wikigen import (
    ARTICLE_SCHEMA,
    RETRIEVAL_SCHEMA,
    TokenChunk,
    average_articles,
    context,
    judge,
    read_entries,
    reference_recall,
    write_articles,
)
from pipelines.evaluation.wikigen_baselines_settings import WikigenBaselines
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import TableWriter, write_json
from pipelines.progress import progress_iter
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
    with stage_run("wikigen_baselines", out) as run:
        counter = TokenCounter(retrieval.tokenizer)
        entry_list = read_entries(entries, chunks, counter.count, s.splits)
        prr = [s.prr_retriever] if "prr" in s.methods else []
        names = list(dict.fromkeys([*s.retrievers, *prr]))
        ranks = rankers(names, retrieval.seed, retrieval.dense_model, embed_cache)
        client = LLMClient.from_settings(llm, responders=responders()) if s.generate else None
        recall: dict[str, list[float]] = {name: [] for name in s.retrievers}
        # each title's context, reused by RR and PRR
        titles: dict[tuple[str, str], list[TokenChunk]] = {}
        article_rows: list[dict[str, Any]] = []
        run.client = client
        stats, scratch = run.stats, run.scratch
        with TableWriter(scratch / "retrieval.parquet", RETRIEVAL_SCHEMA) as retrieval_out:
            for entry in progress_iter(entry_list, "wikigen baselines: reranking"):
                stats.update("entries")
                stats.update("chunks", len(entry.chunks))
                for name, rank in ranks.items():
                    shown = context(entry, entry.title, rank, s.top_k, s.context_tokens)
                    titles[(entry.event_id, name)] = shown
                    if name not in recall:
                        continue  # PRR's reranker alone, not one of the compared ones
                    found = reference_recall(entry.reference, shown)
                    recall[name].append(found)
                    retrieval_out.write(
                        {
                            "event_id": entry.event_id,
                            "split": entry.split,
                            "retriever": name,
                            "chunk_ids": [c.chunk_id for c in shown],
                            "context_tokens": sum(c.tokens for c in shown),
                            "reference_recall": found,
                        }
                    )
        with TableWriter(scratch / "articles.parquet", ARTICLE_SCHEMA, batch_rows=32) as written:
            if client is not None:
                for row in judge(client, write_articles(client, entry_list, titles, ranks, s)):
                    written.write(row)
                    article_rows.append({k: v for k, v in row.items() if k != "claims"})
                    stats.update(f"articles_{row['status']}")
                    if row["status"] != "ok":
                        stats.drop(f"article_{str(row['reason']).split(':', 1)[0]}")
        metrics: dict[str, Any] = {
            "entries": len(entry_list),
            "top_k": s.top_k,
            "context_tokens": s.context_tokens,
            "tokenizer": counter.name,
            "dense_model": display_name(retrieval.dense_model),
            "reference_recall": {
                name: round(100 * fmean(v), 2) if v else 0.0 for name, v in recall.items()
            },
        }
        if client is not None:
            metrics["articles"] = average_articles(article_rows)
        write_json(scratch / "wikigen.json", metrics)
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    metrics = json.loads((out / "wikigen.json").read_text("utf-8"))
    recall = ", ".join(f"{k} {v:.0f}" for k, v in metrics["reference_recall"].items())
    return (
        f"wikigen baselines: {stats.counts['entries']} entries; reference recall by reranker: "
        f"{recall}; {stats.counts.get('articles_ok', 0)} articles written -> {out}/"
    )
