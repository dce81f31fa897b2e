"""The WikiGenBench baselines over every entry: each title's context per reranker with its
reference recall (``retrieval.parquet``), then the RR and PRR articles with their judged
citations (``articles.parquet``), and the metrics. :mod:`pipelines.evaluation.wikigen` ranks,
writes and judges."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from pipelines.embed.models import display_name
from pipelines.evaluation.meteor import Meteor, describe
from pipelines.evaluation.wikigen import (
    ARTICLE_SCHEMA,
    RETRIEVAL_SCHEMA,
    Article,
    EntryChunks,
    TokenChunk,
    average_articles,
    context,
    judge,
    reference_recall,
    write_articles,
)
from pipelines.evaluation.wikigen_baselines_settings import WikigenBaselines
from pipelines.evaluation.wikigen_outline_metrics import OutlineScorer
from pipelines.llm import LLMClient
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.retrieval.rankers import Ranker
from pipelines.retrieval.tokens import TokenCounter
from pipelines.stats import StageStats


@dataclass
class Reranked:
    """Each title's context by ``(event_id, reranker)`` (reused by RR and PRR), and the
    reference recall of every entry per compared reranker."""

    titles: dict[tuple[str, str], list[TokenChunk]] = field(default_factory=dict)
    recall: dict[str, list[float]] = field(default_factory=dict)


def rerankers(s: WikigenBaselines) -> list[str]:
    """The compared rerankers, then PRR's when it is another one."""
    prr = [s.prr_retriever] if "prr" in s.methods else []
    return list(dict.fromkeys([*s.retrievers, *prr]))


def rerank_entries(
    entries: Sequence[EntryChunks],
    ranks: dict[str, Ranker],
    s: WikigenBaselines,
    path: Path,
    stats: StageStats,
) -> Reranked:
    """Every entry's title context per reranker; the compared ones' rows go to ``path``. An
    entry without chunks keeps its rows (an empty context, recall 0) and is counted as
    ``entries_without_chunks``."""
    reranked = Reranked(recall={name: [] for name in s.retrievers})
    with TableWriter(path, RETRIEVAL_SCHEMA) as retrieval_out:
        for entry in progress_iter(entries, "wikigen baselines: reranking"):
            stats.update("entries")
            stats.update("chunks", len(entry.chunks))
            if not entry.chunks:
                stats.update("entries_without_chunks")
            for name, rank in ranks.items():
                shown = context(entry, entry.title, rank, s.top_k, s.context_tokens)
                reranked.titles[(entry.event_id, name)] = shown
                if name not in reranked.recall:
                    continue  # PRR's reranker alone, not one of the compared ones
                found = reference_recall(entry.reference, shown)
                reranked.recall[name].append(found)
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
    return reranked


class ReferenceMetrics:
    """What is measured of written articles against their references, beside the judges:
    METEOR as NLG-eval computes it (``meteor``) and STORM's outline metrics
    (``outline_metrics``). ``labels`` say what made the figures; ``corpus`` holds METEOR's
    aggregate per ``(method, reranker)``, the figure NLG-eval reports. Close it (or use it as a
    context manager) to stop the METEOR jar."""

    def __init__(self, s: WikigenBaselines):
        self.labels: dict[str, str] = {}
        self.corpus: dict[tuple[str, str], float | None] = {}
        self.outline: OutlineScorer | None = None
        self.meteor: Meteor | None = None
        if s.outline_metrics:
            self.outline = OutlineScorer(s.outline_encoder, s.outline_entities)
            self.labels |= self.outline.labels
        if s.meteor:
            self.meteor = Meteor(timeout_s=s.meteor_timeout_s)
            self.labels["meteor_by"] = describe()

    def __enter__(self) -> ReferenceMetrics:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the METEOR jar, if one runs."""
        if self.meteor is not None:
            self.meteor.close()

    def __call__(self, written: Sequence[Article]) -> list[dict[str, Any]]:
        """The measured columns of each written article, in order (a failed METEOR goes to
        ``failed_scores`` with its reason)."""
        out: list[dict[str, Any]] = [{} for _ in written]
        if self.outline is not None:
            pairs = [(a.entry.outline, a.outline) for a in written]
            for row, found in zip(out, self.outline.score(pairs), strict=True):
                row["heading_soft_recall"] = found.soft_recall
                row["heading_entity_recall"] = found.entity_recall
        if self.meteor is not None:
            groups: dict[tuple[str, str], list[int]] = defaultdict(list)
            for k, a in enumerate(written):
                groups[(a.method, a.retriever)].append(k)
            for key, ks in progress_iter(groups.items(), "wikigen baselines: METEOR"):
                found = self.meteor.score(
                    (written[k].text, [written[k].entry.reference]) for k in ks
                )
                self.corpus[key] = found.corpus
                for k, article in zip(ks, found.articles, strict=True):
                    out[k]["meteor"] = article.score
                    if article.error:
                        out[k]["failed"] = [{"score": "meteor", "reason": article.error}]
        return out


def write_and_judge(
    client: LLMClient | None,
    entries: Sequence[EntryChunks],
    reranked: Reranked,
    ranks: dict[str, Ranker],
    s: WikigenBaselines,
    path: Path,
    stats: StageStats,
    measure: ReferenceMetrics | None = None,
) -> list[dict[str, Any]]:
    """With a ``client``, write and judge every article into ``path`` (an empty table without
    one), measured by ``measure``; return the rows without their claims."""
    rows: list[dict[str, Any]] = []
    with TableWriter(path, ARTICLE_SCHEMA, batch_rows=32) as written:
        if client is not None:
            articles = write_articles(client, entries, reranked.titles, ranks, s)
            for row in judge(client, articles, s.judge_scores, measure):
                written.write(row)
                rows.append({k: v for k, v in row.items() if k != "claims"})
                stats.count_status(row, "articles", "article")
    return rows


def wikigen_metrics(
    entries: Sequence[EntryChunks],
    reranked: Reranked,
    article_rows: Sequence[dict[str, Any]],
    s: WikigenBaselines,
    counter: TokenCounter,
    dense_model: str | None,
    *,
    answered: bool,
    judged_by: str = "",
    labels: dict[str, str] | None = None,
    corpus_meteor: dict[tuple[str, str], float | None] | None = None,
) -> dict[str, Any]:
    """``wikigen.json``: reference recall per reranker, and the articles' scores when a model
    wrote them (``answered``), with what gave the judged scores (``judged_by``)."""
    metrics: dict[str, Any] = {
        "entries": len(entries),
        "top_k": s.top_k,
        "context_tokens": s.context_tokens,
        "tokenizer": counter.name,
        "dense_model": display_name(dense_model),
        "reference_recall": {
            name: round(100 * fmean(v), 2) if v else 0.0 for name, v in reranked.recall.items()
        },
    }
    if answered:
        metrics["articles"] = average_articles(article_rows, s.judge_scores)
        if s.judge_scores:
            metrics["judged_by"] = judged_by
        metrics |= labels or {}
        for (method, reranker), corpus in (corpus_meteor or {}).items():
            group = metrics["articles"][method][reranker]
            group["meteor_mean"] = group.pop("meteor", None)
            group["meteor"] = round(100 * corpus, 2) if corpus is not None else None
    return metrics
