"""Verification of synthesized items: near-duplicate insights and two-way inclusion checks.

Every function returns what to keep plus a reason for each item it turns away; nothing is
dropped silently.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from builders.summhay.records import Insight

_WORD = re.compile(r"\w+", re.UNICODE)


def word_set(text: str) -> frozenset[str]:
    """Lower-cased word tokens of ``text``."""
    return frozenset(w.lower() for w in _WORD.findall(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two word sets (0 for two empty sets)."""
    return len(a & b) / len(a | b) if a or b else 0.0


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
    return dot / norm if norm else 0.0


def near_duplicates(
    insights: Sequence[Insight],
    threshold: float,
    vectors: Sequence[Sequence[float]] | None = None,
) -> tuple[list[Insight], dict[str, str]]:
    """Keep the first of every group of insights whose similarity is at least ``threshold``.

    Similarity is the cosine of ``vectors`` (one embedding per insight) when given, else the
    word-set Jaccard. Returns the kept insights and ``{dropped id: id of the insight it
    repeats}``.
    """
    if vectors is not None and len(vectors) != len(insights):
        raise ValueError(f"{len(vectors)} vectors for {len(insights)} insights")
    kept: list[tuple[Insight, int]] = []
    dropped: dict[str, str] = {}
    words = [word_set(i.text) for i in insights]

    def similar(a: int, b: int) -> bool:
        if vectors is not None:
            return cosine(vectors[a], vectors[b]) >= threshold
        return jaccard(words[a], words[b]) >= threshold

    for n, insight in enumerate(insights):
        match = next((k for k, m in kept if similar(n, m)), None)
        if match is None:
            kept.append((insight, n))
        else:
            dropped[insight.insight_id] = match.insight_id
    return [k for k, _ in kept], dropped


def misclassified(insights: Iterable[Insight], verdicts: Mapping[str, str]) -> dict[str, str]:
    """Insights whose classified subtopic differs from the one they were written for.

    ``verdicts`` maps insight id to the subtopic id the classifier chose; an insight with no
    verdict counts as misclassified. Returns ``{insight id: reason}``.
    """
    wrong = {}
    for insight in insights:
        chosen = verdicts.get(insight.insight_id)
        if chosen is None:
            wrong[insight.insight_id] = "the classifier gave no subtopic"
        elif chosen != insight.subtopic_id:
            wrong[insight.insight_id] = f"written for {insight.subtopic_id}, classified as {chosen}"
    return wrong


@dataclass(frozen=True)
class Inclusion:
    """The result of checking one document both ways."""

    missing: tuple[str, ...]
    """Planned insights the document does not carry."""
    unplanned: tuple[str, ...]
    """Insights the document carries although they were not planned for it."""

    @property
    def ok(self) -> bool:
        """Whether the document carries exactly its planned insights."""
        return not self.missing and not self.unplanned

    def reason(self) -> str:
        """Why the document fails, in words fit for a repair prompt and a drop record."""
        parts = []
        if self.missing:
            parts.append(f"missing planned insights {', '.join(self.missing)}")
        if self.unplanned:
            parts.append(f"carries unplanned insights {', '.join(self.unplanned)}")
        return "; ".join(parts)


def check_inclusion(
    planned: Iterable[str], present: Iterable[str], known: Iterable[str]
) -> Inclusion:
    """Compare the planned insight ids with those found ``present`` (ids outside ``known`` are
    ignored: a checker may name insights that do not exist)."""
    known_ids = set(known)
    planned_ids = set(planned)
    found = set(present) & known_ids
    return Inclusion(
        missing=tuple(sorted(planned_ids - found)),
        unplanned=tuple(sorted(found - planned_ids)),
    )
