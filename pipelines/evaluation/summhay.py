"""SummHay's RAG setting, run as a reference baseline.

For every haystack, subtopic and retriever: rank the documents, fill the token budget, bound the
coverage; then (optionally) summarize the context through the LLM layer, judge every reference
insight against the summary's bullets, and score coverage, citation and joint.

As in SummHay's code, the context labels each document by its 1-based position in the haystack
(``Document 7``, in retrieval order) and the summarizer cites those numbers (``[7]``); the
judge sees every non-empty line of the summary as a numbered bullet; a system's scores pool every
insight of its summaries (:func:`average_scores`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from benchsmith_scoring.summhay import (
    COVERAGE_SCORE,
    Bullet,
    InsightScore,
    MetricMode,
    Verdict,
    document_numbers,
    numbered_documents,
    parse_summary,
    score_insights,
    split_lines,
    summarize_scores,
)
from builders.ranking import fill_context
from builders.summhay.answers import JudgeAnswer, known_coverage
from builders.summhay.official import add_summary, summary_key, to_official
from builders.summhay.records import Haystack, Subtopic
from builders.summhay.retrieval import coverage_bound, oracle_scores
from pipelines.evaluation.summhay_baselines_settings import SummhayBaselines
from pipelines.llm import Ask, LLMClient, TextAnswer
from pipelines.retrieval.rankers import rankers
from pipelines.retrieval.settings import RetrievalSettings

Scorer = Callable[[Haystack, Subtopic], list[float]]


def scorers(
    settings: SummhayBaselines, retrieval: RetrievalSettings, embed_cache: Path | None = None
) -> dict[str, Scorer]:
    """The configured retrievers, by name: the shared ones of :func:`rankers` (models load only
    when asked for) over the haystack's documents, and SummHay's oracle."""
    shared = rankers(
        [n for n in settings.retrievers if n != "oracle"],
        retrieval.seed,
        retrieval.dense_model,
        embed_cache,
    )
    out: dict[str, Scorer] = {}
    for name in settings.retrievers:
        if name == "oracle":
            out[name] = lambda h, s: oracle_scores(h, s.subtopic_id)
        else:
            out[name] = lambda h, s, r=shared[name]: r(s.query, [d.text for d in h.documents])
    return out


@dataclass(frozen=True)
class Context:
    """What one retriever put in front of the summarizer for one subtopic."""

    haystack: Haystack
    subtopic: Subtopic
    retriever: str
    document_ids: list[str]
    tokens: int
    reachable: int
    insights: int
    scores: tuple[float, ...]
    """The retriever's score of every haystack document, in haystack order."""

    def row(self) -> dict[str, Any]:
        return {
            "topic_id": self.haystack.topic.topic_id,
            "subtopic_id": self.subtopic.subtopic_id,
            "retriever": self.retriever,
            "document_ids": self.document_ids,
            "context_tokens": self.tokens,
            "reachable": self.reachable,
            "insights": self.insights,
        }


def contexts(
    haystack: Haystack, retrievers: dict[str, Scorer], token_counts: Sequence[int], budget: int
) -> Iterable[Context]:
    """Every retriever's context for every subtopic of ``haystack``."""
    ids = [d.document_id for d in haystack.documents]
    tokens = dict(zip(ids, token_counts, strict=True))
    for subtopic in haystack.subtopics:
        for name, score in retrievers.items():
            scores = tuple(score(haystack, subtopic))
            chosen = fill_context(ids, scores, token_counts, budget)
            reachable, total = coverage_bound(haystack, subtopic.subtopic_id, set(chosen))
            used = sum(tokens[i] for i in chosen)
            yield Context(haystack, subtopic, name, chosen, used, reachable, total, scores)


def _has_bullets(answer: TextAnswer) -> str | None:
    return None if parse_summary(answer.text) else "the summary has no bullet points"


def judge_ask(bullets: Sequence[Bullet], insight: str) -> Ask[JudgeAnswer]:
    """The coverage judge's ask: does one of ``bullets`` (a parsed summary) cover ``insight``."""
    shown = [{"bullet_id": b.bullet_id, "text": b.text} for b in bullets]
    return Ask("summhay/judge", {"bullets": shown, "insight": insight}, JudgeAnswer, known_coverage)


def summarize_ask(context: Context) -> Ask[TextAnswer]:
    """The summarizer's ask: the context's documents in retrieval order, each labelled by its
    haystack position (SummHay's ``Article N`` / ``Conversation N``), which the citations use."""
    haystack = context.haystack
    number = document_numbers([d.document_id for d in haystack.documents])
    texts = {d.document_id: d.text for d in haystack.documents}
    documents = [{"number": number[i], "text": texts[i]} for i in context.document_ids]
    variables = {
        "query": context.subtopic.query,
        "bullets": context.insights,
        "documents": documents,
        "context": numbered_documents((d["number"], d["text"]) for d in documents),
    }
    return Ask("summhay/summarize", variables, TextAnswer, _has_bullets)


NO_DOCUMENTS = "no_documents: the haystack has no documents to summarize"
NO_INSIGHTS = "no_insights: the subtopic has no insights to cover"


def unscorable(context: Context) -> str:
    """Why ``context`` cannot be summarized and scored (its haystack has no documents, or its
    subtopic no insights); empty when it can."""
    if not context.haystack.documents:
        return NO_DOCUMENTS
    if not context.insights:
        return NO_INSIGHTS
    return ""


def evaluate(
    client: LLMClient, batch: Sequence[Context], mode: MetricMode = "paper"
) -> list[dict[str, Any]]:
    """Summarize each context, judge each insight, and score; one row per context. A context
    with nothing to summarize or score (:func:`unscorable`) is not asked: its row fails with
    the reason."""
    asked = [c for c in batch if not unscorable(c)]
    outcomes = iter(
        client.ask_many((summarize_ask(c) for c in asked), "baselines: summarizing", len(asked))
    )
    judged: list[tuple[Context, Any, list[Any]]] = []
    asks = []
    for c in batch:
        summary = None if unscorable(c) else next(outcomes)
        ok = summary is not None and summary.ok
        bullets = parse_summary(summary.value.text) if ok else []
        insights = [i for i in c.haystack.insights if i.subtopic_id == c.subtopic.subtopic_id]
        judged.append((c, summary, bullets))
        asks += [judge_ask(bullets, i.text) for i in insights if ok]
    verdicts = iter(client.ask_many(asks, "baselines: judging", len(asks)))
    rows = []
    for c, summary, bullets in judged:
        if summary is None or not summary.ok:
            reason = summary.error if summary else unscorable(c)
            failed = {"summary": "", "status": "failed", "reason": reason, "verdicts": []}
            rows.append(c.row() | failed)
            continue
        base = c.row() | {"summary": summary.value.text}
        insights = [i for i in c.haystack.insights if i.subtopic_id == c.subtopic.subtopic_id]
        found, problems = [], {}
        for insight in insights:
            outcome = next(verdicts)
            if outcome.ok:
                coverage, bullet = outcome.value.normalized()
                found.append(Verdict(insight.insight_id, coverage, bullet))  # type: ignore[arg-type]
            else:
                found.append(Verdict(insight.insight_id, "none", None))
                problems[insight.insight_id] = f"judge failed: {outcome.error}"
        gold = {i.insight_id: set(c.haystack.gold(i.insight_id)) for i in insights}
        doc_ids = [d.document_id for d in c.haystack.documents]
        scores = score_insights(found, bullets, gold, doc_ids, set(c.document_ids), mode)
        rows.append(
            base
            | {"status": "ok", "reason": ""}
            | summarize_scores(scores)
            | {
                "bullets": len(bullets),
                "unread_citations": sum(b.unread for b in bullets),
                "verdicts": verdict_rows(found, scores, problems),
            }
        )
    return rows


def verdict_rows(
    verdicts: Sequence[Any], scores: Sequence[Any], problems: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """One row per judged insight: the verdict, its citation scores and any problem found
    (``problems`` by insight id, else the scoring's own)."""
    problems = problems or {}
    return [
        {
            "insight_id": v.insight_id,
            "coverage": v.coverage,
            "bullet_id": v.bullet_id,
            "precision": s.precision,
            "recall": s.recall,
            "f1": s.f1,
            "retrievable_recall": s.retrievable_recall,
            "problem": problems.get(v.insight_id, s.problem),
        }
        for v, s in zip(verdicts, scores, strict=True)
    ]


def official_layout(
    haystack: Haystack, batch: Sequence[Context], rows: Sequence[Mapping[str, Any]], model: str
) -> dict[str, Any]:
    """``haystack`` in SummHay's layout with the scores of every retriever of ``batch`` and, for
    each scored row of :func:`evaluate`, its summary and verdicts under
    ``summary_subtopic_{retriever}_{model}``: SummHay's ``utils_eval`` scores these files as
    :func:`average_scores` scores the rows (failed summaries are left out of both)."""
    scores: dict[str, dict[str, tuple[float, ...]]] = {}
    for c in batch:
        scores.setdefault(c.subtopic.subtopic_id, {})[c.retriever] = c.scores
    data = to_official(haystack, scores)
    for row in rows:
        if row["status"] == "ok":
            key = summary_key(row["retriever"], model)
            lines = split_lines(row["summary"])
            add_summary(data, row["subtopic_id"], key, lines, row["verdicts"])
    return data


def insight_scores(row: Mapping[str, Any]) -> list[InsightScore]:
    """The per-insight scores kept in a scored row's verdicts (``problem`` also names a failed
    judge answer there)."""
    return [
        InsightScore(
            v["insight_id"],
            COVERAGE_SCORE[v["coverage"]],
            v["precision"],
            v["recall"],
            v["f1"],
            v["retrievable_recall"],
            v["problem"] or "",
        )
        for v in row["verdicts"]
    ]


SCORE_KEYS = (
    "coverage",
    "citation",
    "joint",
    "citation_precision",
    "citation_recall",
    "retrievable_citation_recall",
)
PER_SUMMARY = ("coverage", "citation", "joint")
"""Scores also given as a mean of per-summary scores, as ``<score>_per_summary_mean``."""


def _round(value: float | int | None) -> float | None:
    return round(value, 2) if value is not None else None


def average_scores(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float | int | None]]:
    """Per retriever, over its scored summaries (rows with their verdicts): SummHay's figures,
    pooled over every insight (Citation, precision and recall over every covered insight), as
    its ``compute_full_results`` computes them; and ``<score>_per_summary_mean``, the mean of each
    summary's own score (Citation over the summaries that cover an insight). With the counts:
    summaries, failed ones, insights, covered insights, citation problems and unread citations."""
    out: dict[str, dict[str, float | int | None]] = {}
    for name in sorted({r["retriever"] for r in rows}):
        mine = [r for r in rows if r["retriever"] == name]
        ok = [r for r in mine if r["status"] == "ok"]
        pooled = summarize_scores([s for r in ok for s in insight_scores(r)])
        entry: dict[str, float | int | None] = {
            "summaries": len(ok),
            "failed": len(mine) - len(ok),
            "insights_scored": pooled["insights_scored"],
            "covered": pooled["covered"],
            "citation_problems": sum(r["citation_problems"] for r in ok),
            "unread_citations": sum(r["unread_citations"] for r in ok),
        }
        for key in SCORE_KEYS:
            entry[key] = _round(pooled[key])
        for key in PER_SUMMARY:
            values = [r[key] for r in ok if r[key] is not None]
            entry[f"{key}_per_summary_mean"] = _round(fmean(values)) if values else None
        out[name] = entry
    return out
