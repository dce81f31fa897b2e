"""Position variants: for each subtopic, the haystack order with its relevant documents at the
top, in the middle or at the bottom, and the haystack's own random order (SummHay Table 3)."""

from __future__ import annotations

import random
from collections.abc import Iterator

from builders.summhay.records import Haystack


def relevant_documents(haystack: Haystack, subtopic_id: str) -> list[str]:
    """Documents that carry at least one insight of ``subtopic_id``."""
    ids = {i.insight_id for i in haystack.insights if i.subtopic_id == subtopic_id}
    return [d.document_id for d in haystack.documents if ids & set(d.insight_ids)]


def orders(haystack: Haystack, rng: random.Random) -> Iterator[tuple[str, str, list[str]]]:
    """``(subtopic id, position, document ids)`` for every subtopic and position.

    The random order is drawn once per haystack; the other positions keep that order within the
    relevant and the other documents, so only the placement differs between variants.
    """
    base = [d.document_id for d in haystack.documents]
    rng.shuffle(base)
    for subtopic in haystack.subtopics:
        relevant = set(relevant_documents(haystack, subtopic.subtopic_id))
        inside = [d for d in base if d in relevant]
        outside = [d for d in base if d not in relevant]
        half = len(outside) // 2
        yield subtopic.subtopic_id, "random", base[:]
        yield subtopic.subtopic_id, "top", inside + outside
        yield subtopic.subtopic_id, "middle", outside[:half] + inside + outside[half:]
        yield subtopic.subtopic_id, "bottom", outside + inside
