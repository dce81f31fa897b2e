"""Ranking helpers shared by the baselines of every family: lexical scores and the token budget."""

from __future__ import annotations

import random
from collections.abc import Sequence

from builders.text import keywords


def fill_context(
    document_ids: Sequence[str], scores: Sequence[float], tokens: Sequence[int], budget: int
) -> list[str]:
    """Documents in descending score (stable), each taken while it fits the token budget."""
    order = sorted(range(len(document_ids)), key=lambda i: -scores[i])
    chosen, used = [], 0
    for i in order:
        if used + tokens[i] <= budget:
            chosen.append(document_ids[i])
            used += tokens[i]
    return chosen


def keyword_scores(query: str, texts: Sequence[str]) -> list[float]:
    """KWs: the number of query keywords each document contains."""
    wanted = keywords(query)
    return [float(len(wanted & keywords(t))) for t in texts]


def random_scores(n: int, rng: random.Random) -> list[float]:
    """Rand: seeded random relevance."""
    return [rng.random() for _ in range(n)]
