"""What each SummHay prompt must answer, and the rules an answer must meet beyond its shape."""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel, Field

from benchsmith_scoring.summhay import read_verdict

_DIGIT = re.compile(r"\d")
_INNER_CAPITAL = re.compile(r"\s[A-Z][a-z]")


class SubtopicItem(BaseModel):
    name: str = Field(min_length=3)
    description: str = Field(min_length=3)


class SubtopicsAnswer(BaseModel):
    subtopics: list[SubtopicItem]


class InsightsAnswer(BaseModel):
    insights: list[str]


class Assignment(BaseModel):
    insight_id: str
    subtopic_id: str


class ClassifyAnswer(BaseModel):
    assignments: list[Assignment]


class InclusionAnswer(BaseModel):
    present: list[str]


class QueryItem(BaseModel):
    subtopic_id: str
    query: str = Field(min_length=5)


class QueriesAnswer(BaseModel):
    queries: list[QueryItem]


def enough_subtopics(n: int) -> Callable[[SubtopicsAnswer], str | None]:
    """At least ``n`` subtopics with distinct names (extra ones are ignored)."""

    def check(answer: SubtopicsAnswer) -> str | None:
        names = {s.name.strip().lower() for s in answer.subtopics}
        if len(names) < n:
            return f"give {n} subtopics with distinct names (got {len(names)} distinct)"
        return None

    return check


def is_specific(sentence: str) -> bool:
    """Whether an insight is built around a number, a date or a named entity (SummHay)."""
    return bool(_DIGIT.search(sentence) or _INNER_CAPITAL.search(sentence))


def enough_insights(n: int, min_words: int = 6) -> Callable[[InsightsAnswer], str | None]:
    """At least ``n`` distinct one-sentence insights, each with a specific number or entity."""

    def check(answer: InsightsAnswer) -> str | None:
        good = [s for s in dict.fromkeys(s.strip() for s in answer.insights) if s]
        short = [s for s in good if len(s.split()) < min_words]
        if short:
            return f"each insight needs at least {min_words} words: {short[0]!r} is too short"
        vague = [s for s in good if not is_specific(s)]
        if vague:
            return f"each insight needs a specific number, date or name: {vague[0]!r} has none"
        if len(good) < n:
            return f"give {n} distinct insights (got {len(good)})"
        return None

    return check


def min_words(n: int) -> Callable[..., str | None]:
    """A document of at least ``n`` words."""

    def check(answer: object) -> str | None:
        words = len(str(getattr(answer, "text", "")).split())
        return None if words >= n else f"the document needs at least {n} words (got {words})"

    return check


class JudgeAnswer(BaseModel):
    """The judge's answer on one insight (SummHay's coverage judge): coverage and bullet id.

    Coverage accepts ``full``/``fully covered``, ``partial``/``partially covered`` and
    ``none``/``no``/``not covered`` in any case; the bullet id may be a number, ``"3"``,
    ``"bullet 3"``, or ``"NA"``/``null`` when no bullet covers the insight.
    """

    coverage: str
    bullet_id: int | str | None = None

    def normalized(self) -> tuple[str, int | None]:
        """``(full|partial|none, bullet id or None)``; ValueError for an unknown coverage."""
        return read_verdict(self.coverage, self.bullet_id)


def known_coverage(answer: JudgeAnswer) -> str | None:
    """The coverage must be full, partial or none."""
    try:
        answer.normalized()
    except ValueError as exc:
        return f"{exc}; answer full, partial or none"
    return None
