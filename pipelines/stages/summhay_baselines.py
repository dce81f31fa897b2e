"""The ``summhay_baselines`` stage: reference retrievers and generation on SummHay haystacks.

For every haystack, subtopic and retriever, ``summhay_contexts.parquet`` holds the context
(document ids within the token budget) and how many insights it can reach;
``summhay_scores.parquet`` the summary, the judge's verdicts and the scores; ``summhay.json`` (DVC
metrics) the coverage bound and the scores per retriever (SummHay's pooled figures and the
per-summary means); ``official/topic_<topic_id>.json`` each haystack in SummHay's layout with
every retriever's document scores, the summaries and the verdicts, for SummHay's own scripts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from builders.summhay import eval_responders
from builders.summhay.records import CONTEXT_SCHEMA, SCORE_SCHEMA, Haystack
from builders.summhay.retrieval import bounds_by_retriever
from pipelines.embed.models import display_name
from pipelines.errors import MissingInputError
from pipelines.evaluation.summhay import (
    average_scores,
    contexts,
    evaluate,
    official_layout,
    scorers,
)
from pipelines.evaluation.summhay_baselines_settings import SummhayBaselines
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import TableWriter, write_json
from pipelines.progress import progress_iter
from pipelines.retrieval.settings import RetrievalSettings
from pipelines.retrieval.tokens import TokenCounter
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

CONTEXTS = "summhay_contexts.parquet"
SCORES = "summhay_scores.parquet"
METRICS = "summhay.json"
OFFICIAL = "official"


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
    with stage_run("summhay_baselines", out) as run:
        if not haystacks.is_file():
            raise MissingInputError(f"missing {haystacks} (the SummHay haystacks)", haystacks)
        built = [Haystack.from_row(r) for r in pq.read_table(haystacks).to_pylist()]
        counter = TokenCounter(retrieval.tokenizer)
        retrievers = scorers(settings, retrieval, embed_cache)
        client = (
            LLMClient.from_settings(llm, responders=eval_responders.responders())
            if settings.summarize
            else None
        )
        bound_rows: list[dict[str, object]] = []
        score_rows: list[dict[str, Any]] = []
        run.client = client
        stats = run.stats
        (run.scratch / OFFICIAL).mkdir()
        with (
            TableWriter(run.scratch / CONTEXTS, CONTEXT_SCHEMA) as context_out,
            TableWriter(run.scratch / SCORES, SCORE_SCHEMA, batch_rows=32) as score_out,
        ):
            for haystack in progress_iter(built, "summhay baselines: haystacks"):
                stats.update("summhay_haystacks")
                counts = counter.count([d.text for d in haystack.documents])
                batch = list(contexts(haystack, retrievers, counts, settings.context_tokens))
                for context in batch:
                    row = context.row()
                    context_out.write(row)
                    bound_rows.append(row)
                    stats.update("summhay_contexts")
                rows = evaluate(client, batch, settings.metric_mode) if client else []
                for row in rows:
                    score_out.write(row)
                    score_rows.append({k: v for k, v in row.items() if k != "summary"})
                    stats.update(f"summhay_summaries_{row['status']}")
                    if row["status"] != "ok":
                        stats.drop(f"summary_{str(row['reason']).split(':', 1)[0]}")
                model = client.backend.model if client else ""
                official = official_layout(haystack, batch, rows, model)
                path = run.scratch / OFFICIAL / f"topic_{haystack.topic.topic_id}.json"
                path.write_text(json.dumps(official, indent=1, ensure_ascii=False) + "\n", "utf-8")
        metrics = {
            "context_tokens": settings.context_tokens,
            "tokenizer": counter.name,
            "dense_model": display_name(retrieval.dense_model),
            "coverage_bound": {k: round(v, 2) for k, v in bounds_by_retriever(bound_rows).items()},
            "metric_mode": settings.metric_mode,
            "scores": average_scores(score_rows),
        }
        write_json(run.scratch / METRICS, metrics)
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    metrics = json.loads((out / METRICS).read_text("utf-8"))
    bounds = ", ".join(f"{k} {v:.0f}" for k, v in metrics["coverage_bound"].items())
    return (
        f"summhay baselines: {stats.counts['summhay_contexts']} SummHay contexts; coverage bound "
        f"by retriever: {bounds} -> {out}/"
    )
