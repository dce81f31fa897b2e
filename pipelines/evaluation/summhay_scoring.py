"""The SummHay baselines over every haystack: the contexts and scores tables, SummHay's own
layout of each haystack with every retriever's scores, summaries and verdicts, and the metrics.
:mod:`pipelines.evaluation.summhay` ranks, fills, summarizes, judges and scores."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from builders.summhay.records import CONTEXT_SCHEMA, SCORE_SCHEMA, Haystack
from builders.summhay.retrieval import bounds_by_retriever
from pipelines.embed.models import display_name
from pipelines.errors import MissingInputError
from pipelines.evaluation.summhay import (
    Context,
    Scorer,
    average_scores,
    contexts,
    evaluate,
    official_layout,
)
from pipelines.evaluation.summhay_baselines_settings import SummhayBaselines
from pipelines.llm import LLMClient
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.retrieval.tokens import TokenCounter
from pipelines.stats import StageStats

CONTEXTS = "summhay_contexts.parquet"
SCORES = "summhay_scores.parquet"
METRICS = "summhay.json"
OFFICIAL = "official"


@dataclass
class Scored:
    """What scoring every haystack keeps for the metrics: the context rows (for the coverage
    bounds) and the score rows without their summaries."""

    bound_rows: list[dict[str, object]] = field(default_factory=list)
    score_rows: list[dict[str, Any]] = field(default_factory=list)


def read_haystacks(path: Path) -> list[Haystack]:
    """The summhay stage's haystacks."""
    if not path.is_file():
        raise MissingInputError(f"missing {path} (the SummHay haystacks)", path)
    return [Haystack.from_row(r) for r in pq.read_table(path).to_pylist()]


def score_haystacks(
    haystacks: Sequence[Haystack],
    retrievers: dict[str, Scorer],
    counter: TokenCounter,
    client: LLMClient | None,
    settings: SummhayBaselines,
    folder: Path,
    stats: StageStats,
) -> Scored:
    """Every retriever's context of every subtopic and, with a ``client``, its summary and
    scores; write the contexts and scores tables and ``official/`` under ``folder``. Haystacks
    without documents and subtopics without insights keep their rows and are counted."""
    scored = Scored()
    (folder / OFFICIAL).mkdir()
    with (
        TableWriter(folder / CONTEXTS, CONTEXT_SCHEMA) as context_out,
        TableWriter(folder / SCORES, SCORE_SCHEMA, batch_rows=32) as score_out,
    ):
        for haystack in progress_iter(haystacks, "summhay baselines: haystacks"):
            stats.update("summhay_haystacks")
            if not haystack.documents:
                stats.update("summhay_haystacks_without_documents")
            have = {i.subtopic_id for i in haystack.insights}
            if bare := sum(s.subtopic_id not in have for s in haystack.subtopics):
                stats.update("summhay_subtopics_without_insights", bare)
            counts = counter.count([d.text for d in haystack.documents])
            batch = list(contexts(haystack, retrievers, counts, settings.context_tokens))
            for context in batch:
                row = context.row()
                context_out.write(row)
                scored.bound_rows.append(row)
                stats.update("summhay_contexts")
            rows = evaluate(client, batch, settings.metric_mode) if client else []
            for row in rows:
                score_out.write(row)
                scored.score_rows.append({k: v for k, v in row.items() if k != "summary"})
                stats.count_status(row, "summhay_summaries", "summary")
            write_official(folder / OFFICIAL, haystack, batch, rows, client)
    return scored


def write_official(
    folder: Path,
    haystack: Haystack,
    batch: Sequence[Context],
    rows: Sequence[Mapping[str, Any]],
    client: LLMClient | None,
) -> None:
    """``folder/topic_<topic_id>.json``: the haystack in SummHay's layout."""
    model = client.backend.model if client else ""
    official = official_layout(haystack, batch, rows, model)
    path = folder / f"topic_{haystack.topic.topic_id}.json"
    path.write_text(json.dumps(official, indent=1, ensure_ascii=False) + "\n", "utf-8")


def summhay_metrics(
    scored: Scored, settings: SummhayBaselines, counter: TokenCounter, dense_model: str | None
) -> dict[str, Any]:
    """``summhay.json``: the coverage bound and the scores per retriever."""
    bounds = bounds_by_retriever(scored.bound_rows)
    return {
        "context_tokens": settings.context_tokens,
        "tokenizer": counter.name,
        "dense_model": display_name(dense_model),
        "coverage_bound": {k: round(v, 2) for k, v in bounds.items()},
        "metric_mode": settings.metric_mode,
        "scores": average_scores(scored.score_rows),
    }
