"""The ``summhay_baselines`` stage: reference retrievers and generation on SummHay haystacks.

For every haystack, subtopic and retriever, ``summhay_contexts.parquet`` holds the context
(document ids within the token budget) and how many insights it can reach;
``summhay_scores.parquet`` the summary, the judge's verdicts and the scores; ``summhay.json`` (DVC
metrics) the coverage bound and the scores per retriever (SummHay's pooled figures and the
per-summary means); ``official/topic_<topic_id>.json`` each haystack in SummHay's layout with
every retriever's document scores, the summaries and the verdicts, for SummHay's own scripts.
"""

from __future__ import annotations

from pathlib import Path

from builders.summhay import eval_responders
from pipelines.evaluation.summhay import scorers
from pipelines.evaluation.summhay_baselines_settings import SummhayBaselines
from pipelines.evaluation.summhay_scoring import (
    METRICS,
    read_haystacks,
    score_haystacks,
    summhay_metrics,
)
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import write_json
from pipelines.retrieval.settings import RetrievalSettings
from pipelines.retrieval.tokens import TokenCounter
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats


def run_summhay_baselines(
    settings: SummhayBaselines,
    *,
    haystacks: Path,
    out: Path,
    llm: LLMSettings,
    retrieval: RetrievalSettings,
    embed_cache: Path | None = None,
) -> StageStats:
    """Run the SummHay retrieval bounds and, if asked, the generation baseline; dense vectors are
    kept in the embedding cache at ``embed_cache`` (the embed stage's) when given."""
    with stage_run("summhay_baselines", out, models=True) as run:
        built = read_haystacks(haystacks)
        counter = TokenCounter(retrieval.tokenizer)
        retrievers = scorers(settings, retrieval, embed_cache)
        if settings.summarize:
            run.client = LLMClient.from_settings(llm, responders=eval_responders.responders())
        scored = score_haystacks(
            built, retrievers, counter, run.client, settings, run.scratch, run.stats
        )
        metrics = summhay_metrics(scored, settings, counter, retrieval.dense_model)
        write_json(run.scratch / METRICS, metrics)
        run.stats.show(coverage_bound=metrics["coverage_bound"])
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    c = stats.counts
    bounds = ", ".join(f"{k} {v:.0f}" for k, v in stats.headline["coverage_bound"].items())
    bare = [
        f"{c[key]} {what}"
        for key, what in (
            ("summhay_haystacks_without_documents", "haystacks without documents"),
            ("summhay_subtopics_without_insights", "subtopics without insights"),
        )
        if c.get(key)
    ]
    note = f" ({', '.join(bare)})" if bare else ""
    return (
        f"summhay baselines: {c['summhay_contexts']} SummHay contexts{note}; coverage bound "
        f"by retriever: {bounds} -> {out}/"
    )
