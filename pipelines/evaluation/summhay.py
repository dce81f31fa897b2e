"""SummHay's RAG setting, run as a reference baseline.

For every haystack, subtopic and retriever: rank the documents, fill the token budget, bound the
coverage; then (optionally) summarize the context through the LLM layer, judge every reference
insight against the summary's bullets, and score coverage, citation and joint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from builders.ranking import fill_context
from builders.summhay.answers import JudgeAnswer, known_coverage
from builders.summhay.records import Haystack, Subtopic
from builders.summhay.retrieval import coverage_bound, oracle_scores
from builders.summhay.scoring import (
    Bullet,
    Verdict,
    parse_summary,
    score_insights,
    summarize_scores,
)
from pipelines.evaluation.settings import SummhayBaselines
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
            chosen = fill_context(ids, score(haystack, subtopic), token_counts, budget)
            reachable, total = coverage_bound(haystack, subtopic.subtopic_id, set(chosen))
            yield Context(
                haystack, subtopic, name, chosen, sum(tokens[i] for i in chosen), reachable, total
            )


def _has_bullets(answer: TextAnswer) -> str | None:
    return None if parse_summary(answer.text) else "the summary has no bullet points"


def judge_ask(bullets: Sequence[Bullet], insight: str) -> Ask[JudgeAnswer]:
    """The coverage judge's ask: does one of ``bullets`` (a parsed summary) cover ``insight``."""
    shown = [{"bullet_id": b.bullet_id, "text": b.text} for b in bullets]
    return Ask("summhay/judge", {"bullets": shown, "insight": insight}, JudgeAnswer, known_coverage)


def evaluate(client: LLMClient, batch: Sequence[Context]) -> list[dict[str, Any]]:
    """Summarize each context, judge each insight, and score; one row per context."""
    texts = {d.document_id: d.text for c in batch for d in c.haystack.documents}
    summaries = list(
        client.ask_many(
            (
                Ask(
                    "summhay/summarize",
                    {
                        "query": c.subtopic.query,
                        "bullets": c.insights,
                        "documents": [{"document_id": i, "text": texts[i]} for i in c.document_ids],
                    },
                    TextAnswer,
                    _has_bullets,
                )
                for c in batch
            ),
            "baselines: summarizing",
            len(batch),
        )
    )
    judged: list[tuple[Context, Any, list[Any]]] = []
    asks = []
    for c, summary in zip(batch, summaries, strict=True):
        bullets = parse_summary(summary.value.text) if summary.ok else []
        insights = [i for i in c.haystack.insights if i.subtopic_id == c.subtopic.subtopic_id]
        judged.append((c, summary, bullets))
        asks += [judge_ask(bullets, i.text) for i in insights if summary.ok]
    verdicts = iter(client.ask_many(asks, "baselines: judging", len(asks)))
    rows = []
    for c, summary, bullets in judged:
        base = c.row() | {"summary": summary.value.text if summary.ok else ""}
        if not summary.ok:
            rows.append(base | {"status": "failed", "reason": summary.error, "verdicts": []})
            continue
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
        scores = score_insights(found, bullets, gold, doc_ids, set(c.document_ids))
        rows.append(
            base
            | {"status": "ok", "reason": ""}
            | summarize_scores(scores)
            | {
                "bullets": len(bullets),
                "verdicts": [
                    {
                        "insight_id": v.insight_id,
                        "coverage": v.coverage,
                        "bullet_id": v.bullet_id,
                        "f1": s.f1,
                        "problem": problems.get(v.insight_id, s.problem),
                    }
                    for v, s in zip(found, scores, strict=True)
                ],
            }
        )
    return rows


SCORE_KEYS = (
    "coverage",
    "citation",
    "joint",
    "citation_precision",
    "citation_recall",
    "retrievable_citation_recall",
)


def average_scores(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float | int]]:
    """Per retriever: the mean of each score over its summaries (SummHay averages summaries),
    with the number of summaries and of failed ones."""
    out: dict[str, dict[str, float | int]] = {}
    for name in sorted({r["retriever"] for r in rows}):
        mine = [r for r in rows if r["retriever"] == name]
        ok = [r for r in mine if r["status"] == "ok"]
        entry: dict[str, float | int] = {"summaries": len(ok), "failed": len(mine) - len(ok)}
        for key in SCORE_KEYS:
            entry[key] = round(fmean(r[key] for r in ok), 2) if ok else 0.0
        out[name] = entry
    return out
