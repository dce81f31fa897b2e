"""Ranking helpers shared by the baselines of every family."""

from __future__ import annotations

from collections.abc import Sequence


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
