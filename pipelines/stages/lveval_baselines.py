"""The ``lveval_baselines`` stage: evidence recall per retriever and the AK score of a
generation baseline, by length level and variant.

Writes ``retrieval.parquet`` (per record and retriever: evidence spans found in the top-k
chunks), ``answers.parquet`` (per record: prediction, AK score, output length, status),
``lveval.json`` (DVC metrics), ``ak_by_level.csv`` and ``recall_by_level.csv`` (DVC plots: score
against level) and ``stats.json``, whose ``passages``, ``dense_chunks`` and ``term_chunks`` say
how often a passage's chunks, a chunk's vector and a chunk's bag of words were found already
computed. Records stream from one (dataset, level) file at a time.
"""

from __future__ import annotations

from pathlib import Path

from builders.lveval.responders import answer_responders
from pipelines.embed.models import load_tokenizer
from pipelines.embed.settings import EmbedSettings
from pipelines.evaluation.lveval import Chunker
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.evaluation.lveval_prefill import prefill
from pipelines.evaluation.lveval_scoring import (
    lveval_metrics,
    record_files,
    score_records,
    write_plots,
)
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import write_json
from pipelines.retrieval.rankers import CachedDense, memo_stats, rankers
from pipelines.retrieval.settings import RetrievalSettings
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats


def run_lveval_baselines(
    s: LVEvalBaselines,
    *,
    records: Path,
    out: Path,
    llm: LLMSettings,
    retrieval: RetrievalSettings,
    embed_cache: Path | None = None,
    embed: EmbedSettings | None = None,
) -> StageStats:
    """Score every record file under ``records``; dense vectors are kept in the embedding
    cache at ``embed_cache`` (the embed stage's) when given, and then every distinct chunk is
    embedded first, in bulk, with ``embed``'s executor (local, or Ray)."""
    with stage_run("lveval_baselines", out, models=True) as run:
        files = record_files(records)
        ranks = rankers(s.retrievers, retrieval.seed, retrieval.dense_model, embed_cache)
        dense = ranks.get("dense")
        if isinstance(dense, CachedDense) and dense.cache is not None:
            settings = embed or EmbedSettings()
            run.extra["dense_prefill"] = prefill(files, s.chunk_words, dense, settings, run.scratch)
        tokenizer = load_tokenizer(retrieval.tokenizer)
        if s.answer:
            run.client = LLMClient.from_settings(llm, responders=answer_responders())
        chunker = Chunker(s.chunk_words)
        scored = score_records(
            files, ranks, run.client, tokenizer, s, run.scratch, run.stats, chunker
        )
        run.extra |= {"passages": chunker.stats(), **memo_stats(ranks)}
        answered = run.client is not None
        metrics = lveval_metrics(scored, s, retrieval.dense_model, answered=answered)
        write_json(run.scratch / "lveval.json", metrics)
        write_plots(run.scratch, scored)
        run.stats.show(ak_mean=metrics.get("ak_mean", "n/a"))
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    empty = stats.counts.get("records_empty_context", 0)
    note = f" ({empty} with an empty context, not scored)" if empty else ""
    return (
        f"lveval baselines: {stats.counts['records']} records{note}; mean AK "
        f"{stats.headline.get('ak_mean', 'n/a')} -> {out}/"
    )
