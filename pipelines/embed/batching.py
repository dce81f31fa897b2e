"""Token-budget batches: texts sorted by length, each batch as many as fit the budget.

A batch is padded to its longest text, so sorting by length keeps padding small, and a budget in
tokens (rows x padded length) keeps memory steady whatever the lengths.

With ``multiple`` above 1 the padded length is rounded up to a multiple of it, and the rows of
a width's last, partial batch are split into powers of two. The model then sees a bounded set of
tensor shapes however many texts pass through it, so the per-shape kernels and workspaces that
CPU and GPU libraries keep stay bounded too (see ``docs/performance.md``).
"""

from __future__ import annotations

from collections.abc import Sequence


def width_of(longest: int, multiple: int = 1, cap: int = 0) -> int:
    """The padded length of a batch whose longest text has ``longest`` tokens."""
    width = -(-max(longest, 1) // multiple) * multiple
    return min(width, cap) if cap and longest <= cap else width


def plan_batches(
    lengths: Sequence[int], budget: int, max_batch: int, multiple: int = 1, cap: int = 0
) -> list[list[int]]:
    """Indices of ``lengths`` in batches, longest first; each batch's rows x padded length stays
    within ``budget`` (a text longer than the budget gets a batch of its own)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    if multiple <= 1:
        batches, i = [], 0
        while i < len(order):
            size = max(1, min(max_batch, budget // max(lengths[order[i]], 1)))
            batches.append(order[i : i + size])
            i += size
        return batches
    batches, i = [], 0
    while i < len(order):
        width = width_of(lengths[order[i]], multiple, cap)
        end = i
        while end < len(order) and width_of(lengths[order[end]], multiple, cap) == width:
            end += 1
        size = max(1, min(max_batch, budget // width))
        full = i + (end - i) // size * size
        batches += [order[j : j + size] for j in range(i, full, size)]
        rest = end - full
        while rest:  # the partial batch, as powers of two: 13 rows become 8 + 4 + 1
            rows = 1 << (rest.bit_length() - 1)
            batches.append(order[full : full + rows])
            full, rest = full + rows, rest - rows
        i = end
    return batches


def padded_tokens(
    lengths: Sequence[int], batches: Sequence[Sequence[int]], multiple: int = 1, cap: int = 0
) -> int:
    """Positions the model computes: each batch's rows times its padded length."""
    return sum(len(b) * width_of(max(lengths[i] for i in b), multiple, cap) for b in batches if b)


def padding_ratio(
    lengths: Sequence[int], batches: Sequence[Sequence[int]], multiple: int = 1, cap: int = 0
) -> float:
    """The share of computed positions that are padding."""
    padded = padded_tokens(lengths, batches, multiple, cap)
    return 1 - sum(lengths) / padded if padded else 0.0
