"""SummHay scoring: summaries parsed into cited bullets, judge verdicts, and the paper's scores.

Per reference insight i of a subtopic (SummHay section 4):

- coverage_i is 1 (full), 0.5 (partial) or 0 (none), as judged against the summary's bullets;
- F1_i is the F1 between the documents cited by the bullet that covers i and i's gold documents;
- Coverage = mean coverage_i over all insights; Citation = mean F1_i over covered insights;
  Joint = mean coverage_i * F1_i over all insights; all scaled by 100.

Beyond the paper: precision and recall of citations (its Appendix A.5), and a *retrievable*
citation recall where the gold is limited to the documents that were in the context (RAG).
A verdict that covers an insight but names no bullet, or a bullet that does not exist, keeps
its coverage and scores 0 for citation, with the problem recorded (the public code crashes or
scores the wrong bullet there).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Literal

Coverage = Literal["full", "partial", "none"]
COVERAGE_SCORE: dict[str, float] = {"full": 1.0, "partial": 0.5, "none": 0.0}

_BRACKET = re.compile(r"\[([^\[\]]{1,80})\]")
_CITE_TOKEN = re.compile(r"^(?:doc(?:ument)?s?\.?\s*)?([A-Za-z]*\d+[A-Za-z0-9_-]*)$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•‣–]|\d{1,3}[.)])\s+")
_HEADER = re.compile(r"^\s*(?:#{1,6}\s|\*\*[^*]+\*\*:?\s*$|[^\[\]]{1,80}:\s*$)")


@dataclass(frozen=True)
class Bullet:
    """One bullet of a summary: 1-based id, its text without citations, and the cited tokens."""

    bullet_id: int
    text: str
    citations: tuple[str, ...]


def citations_in(text: str) -> tuple[list[str], str]:
    """Citation tokens of ``text`` (``[1]``, ``[1, 4]``, ``[3][7]``, ``[Doc 3]``) and the text
    without them. Brackets that are not citations are left in the text."""
    tokens: list[str] = []

    def take(match: re.Match[str]) -> str:
        parts = [p.strip() for p in re.split(r"[,;]", match.group(1))]
        found = [m.group(1) for p in parts if (m := _CITE_TOKEN.match(p))]
        if not found or len(found) != len(parts):
            return match.group(0)
        tokens.extend(found)
        return ""

    stripped = _BRACKET.sub(take, text)
    return tokens, " ".join(stripped.split())


def parse_summary(summary: str) -> list[Bullet]:
    """The bullets of ``summary``; header lines are ignored. Without bullet markers, every other
    non-empty line is a bullet."""
    lines = [line for line in summary.splitlines() if line.strip()]
    marked = [line for line in lines if _BULLET.match(line)]
    chosen = marked if marked else [line for line in lines if not _HEADER.match(line)]
    bullets = []
    for line in chosen:
        tokens, text = citations_in(_BULLET.sub("", line, count=1))
        if text or tokens:
            bullets.append(Bullet(len(bullets) + 1, text, tuple(dict.fromkeys(tokens))))
    return bullets


def resolve_citations(tokens: Iterable[str], document_ids: Sequence[str]) -> set[str]:
    """Map citation tokens to document ids: an exact id, else the id with the same number
    (``3`` cites ``D03``). Tokens that match no document are dropped."""
    exact = {d.lower(): d for d in document_ids}
    by_number: dict[int, str] = {}
    for doc in document_ids:
        if m := re.search(r"(\d+)$", doc):
            by_number.setdefault(int(m.group(1)), doc)
    out = set()
    for token in tokens:
        if token.lower() in exact:
            out.add(exact[token.lower()])
        elif (m := re.search(r"(\d+)$", token)) and int(m.group(1)) in by_number:
            out.add(by_number[int(m.group(1))])
    return out


@dataclass(frozen=True)
class Verdict:
    """The judge's verdict on one insight: coverage and the bullet that covers it (or None)."""

    insight_id: str
    coverage: Coverage
    bullet_id: int | None


@dataclass(frozen=True)
class InsightScore:
    """Scores of one insight; ``problem`` says why citation is 0 despite coverage."""

    insight_id: str
    coverage: float
    precision: float
    recall: float
    f1: float
    retrievable_recall: float | None
    problem: str = ""


def f1(precision: float, recall: float) -> float:
    """Harmonic mean, 0 when both are 0."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def score_insights(
    verdicts: Sequence[Verdict],
    bullets: Sequence[Bullet],
    gold: Mapping[str, set[str]],
    document_ids: Sequence[str],
    context_ids: set[str] | None = None,
) -> list[InsightScore]:
    """Score each insight of one subtopic summary. ``gold`` maps insight to its documents;
    ``context_ids`` are the documents the summarizer saw (RAG), for the retrievable recall."""
    by_id = {b.bullet_id: b for b in bullets}
    scores = []
    for v in verdicts:
        coverage = COVERAGE_SCORE[v.coverage]
        truth = gold.get(v.insight_id, set())
        reachable = truth & context_ids if context_ids is not None else truth
        if coverage == 0:
            scores.append(InsightScore(v.insight_id, 0.0, 0.0, 0.0, 0.0, None))
            continue
        bullet = by_id.get(v.bullet_id) if v.bullet_id is not None else None
        if bullet is None:
            problem = (
                "covered, but no bullet named"
                if v.bullet_id is None
                else (f"covered by bullet {v.bullet_id}, which does not exist")
            )
            retrievable = 0.0 if reachable else None
            scores.append(InsightScore(v.insight_id, coverage, 0.0, 0.0, 0.0, retrievable, problem))
            continue
        cited = resolve_citations(bullet.citations, document_ids)
        hits = len(cited & truth)
        precision = hits / len(cited) if cited else 0.0
        recall = hits / len(truth) if truth else 0.0
        retrievable = len(cited & reachable) / len(reachable) if reachable else None
        scores.append(
            InsightScore(
                v.insight_id, coverage, precision, recall, f1(precision, recall), retrievable
            )
        )
    return scores


def summarize_scores(scores: Sequence[InsightScore]) -> dict[str, float | int]:
    """Coverage, Citation, Joint (x100, SummHay), citation precision and recall over covered
    insights, and the retrievable recall, with the counts behind them."""
    covered = [s for s in scores if s.coverage > 0]
    reachable = [s.retrievable_recall for s in covered if s.retrievable_recall is not None]
    return {
        "insights_scored": len(scores),
        "covered": len(covered),
        "coverage": 100 * fmean(s.coverage for s in scores) if scores else 0.0,
        "citation": 100 * fmean(s.f1 for s in covered) if covered else 0.0,
        "joint": 100 * fmean(s.coverage * s.f1 for s in scores) if scores else 0.0,
        "citation_precision": 100 * fmean(s.precision for s in covered) if covered else 0.0,
        "citation_recall": 100 * fmean(s.recall for s in covered) if covered else 0.0,
        "retrievable_citation_recall": 100 * fmean(reachable) if reachable else 0.0,
        "citation_problems": sum(1 for s in scores if s.problem),
    }
