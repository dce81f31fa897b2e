"""Token-budget batches: texts sorted by length, each batch as many as fit the budget.

A batch is padded to its longest text, so sorting by length keeps padding small, and a budget in
tokens (rows x padded length) keeps memory steady whatever the lengths.
"""

from __future__ import annotations

from collections.abc import Sequence


def plan_batches(lengths: Sequence[int], budget: int, max_batch: int) -> list[list[int]]:
    """Indices of ``lengths`` in batches, longest first; each batch's rows x longest length stays
    within ``budget`` (a text longer than the budget gets a batch of its own)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches, i = [], 0
    while i < len(order):
        longest = max(lengths[order[i]], 1)
        size = max(1, min(max_batch, budget // longest))
        batches.append(order[i : i + size])
        i += size
    return batches


def padded_tokens(lengths: Sequence[int], batches: Sequence[Sequence[int]]) -> int:
    """Positions the model computes: each batch's rows times its longest text."""
    return sum(len(b) * max(lengths[i] for i in b) for b in batches if b)


def padding_ratio(lengths: Sequence[int], batches: Sequence[Sequence[int]]) -> float:
    """The share of computed positions that are padding."""
    padded = padded_tokens(lengths, batches)
    return 1 - sum(lengths) / padded if padded else 0.0
