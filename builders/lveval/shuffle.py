"""``random.Random.shuffle``'s order of a long list, drawn in bulk.

A context's distractors are the whole pool in the order ``rng.shuffle`` leaves it, of which
only the first few dozen are read. ``rng.shuffle`` makes one Python-level draw per element
(``_randbelow(i + 1)`` for ``i`` from ``n - 1`` down to 1: the top ``(i + 1).bit_length()`` bits
of 32-bit Mersenne Twister words until they are at most ``i``), so with a pool that grows with
the world every context costs time in proportion to the world.

:func:`shuffled_positions` gives exactly the same order and leaves ``rng`` in exactly the same
state, doing the work in NumPy: ``rng`` gives the words in one call, the rejection sampling runs
over blocks of words at a time (:func:`_accepted`), and the swaps of every step down to
position :data:`HEAD` are resolved by following, for each position, the step that last wrote it
(:func:`_sources`). The last ``HEAD - 1`` steps, which decide the positions read first, are
``rng.shuffle`` itself.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import chain

import numpy as np

HEAD = 256
"""Positions ordered by ``rng.shuffle`` itself, at the end."""
SHORT = 2048
"""Lists shorter than this are shuffled by ``rng.shuffle`` alone: NumPy's set-up costs more than
their draws (about 0.4 ms for 2,000 items on one core, either way)."""
_BLOCK = 8192  # words sampled per NumPy pass at most


def shuffled_positions(n: int, rng: random.Random) -> Iterator[int]:
    """The positions of a list of ``n`` items in the order ``rng.shuffle`` would leave them
    (``[items[k] for k in shuffled_positions(len(items), rng)]`` equals the shuffled list), with
    ``rng`` advanced as that call advances it. Every draw is made before this returns; the
    positions past the first :data:`HEAD` are worked out when the iteration reaches them."""
    if n < SHORT or type(rng) is not random.Random:
        order = list(range(n))
        rng.shuffle(order)
        return iter(order)
    steps = np.arange(n - 1, HEAD - 1, -1)
    picks = _draws(rng, n)
    source = _sources(n, steps, picks)
    head = source[:HEAD].tolist()
    rng.shuffle(head)  # the steps i < HEAD only move positions below HEAD
    return chain(head, _tail(steps, picks, source))


def _draws(rng: random.Random, n: int) -> np.ndarray:
    """``rng._randbelow(i + 1)`` for ``i`` from ``n - 1`` down to :data:`HEAD`, with ``rng``
    left where those draws leave it. The 32-bit words come from ``rng`` itself,
    ``getrandbits(32 * m)`` being ``m`` of them, the first in the lowest bits; only as many are
    taken as the steps still to draw, since each takes one at least, so none goes unused."""
    out = np.empty(n - HEAD, dtype=np.int64)
    words = np.empty(0, dtype=np.uint64)
    done = 0
    while done < len(out):
        top = n - 1 - done  # the step being drawn
        width = (top + 1).bit_length()
        last = max(HEAD, (1 << (width - 1)) - 1)  # the last step drawing as many bits
        need = min(top - last + 1, _BLOCK)
        if len(words) < need:
            more = len(out) - done - len(words)
            raw = rng.getrandbits(32 * more).to_bytes(4 * more, "little")
            words = np.concatenate((words, np.frombuffer(raw, dtype="<u4").astype(np.uint64)))
        block = words[: min(len(words), 2 * need + 32, _BLOCK)]
        values = (block >> np.uint64(32 - width)).astype(np.int64)
        kept = np.flatnonzero(_accepted(values, top))[:need]
        used = len(block) if len(kept) < need else int(kept[-1]) + 1
        out[done : done + len(kept)] = values[kept]
        done += len(kept)
        words = words[used:]
    return out


def _accepted(values: np.ndarray, top: int) -> np.ndarray:
    """Which of a block of candidate draws are kept, the first compared with step ``top``.

    A candidate is kept when it is at most the current step, and each kept one moves to the next
    step down: kept[t] = values[t] <= top - (candidates kept before t). That recurrence is solved
    as a fixed point: a guess right up to some t gives a recomputed guess right up to t + 1, so
    the iteration ends (within the block's length, in practice within a few passes), and it ends
    only on the exact solution."""
    room = top - values
    kept = np.arange(len(values)) <= room  # every candidate kept: the first guess
    while True:
        taken = np.cumsum(kept)
        taken -= kept  # kept before each candidate
        again = taken <= room
        if np.array_equal(again, kept):
            return kept
        kept = again


def _sources(n: int, steps: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """For each position, the original position of the item it holds just before it is last
    written (before its own step, or after every bulk step for one below :data:`HEAD`).

    Step ``i`` swaps positions ``i`` and ``picks[i]``: the item it sends to ``picks[i]`` is the
    one position ``i`` held before step ``i``. So position ``q`` holds, before its last write,
    what position ``s`` held before step ``s``, with ``s`` the last step (the smallest) that
    picked ``q``, or its own item when no step did; following those links to the end gives the
    source."""
    moved = picks != steps
    link = np.full(n, n)
    np.minimum.at(link, picks[moved], steps[moved])
    source = np.where(link == n, np.arange(n), link)
    while True:
        further = source[source]
        if np.array_equal(further, source):
            return source
        source = further


def _tail(steps: np.ndarray, picks: np.ndarray, source: np.ndarray) -> Iterator[int]:
    """Positions :data:`HEAD` onwards: position ``i`` keeps what step ``i`` moved into it, the
    item position ``picks[i]`` held then: from the last earlier step that picked the same
    position (the next larger step in its group), or the original item."""
    order = np.lexsort((steps, picks))
    grouped, by_step = picks[order], steps[order]
    earlier = np.full(len(steps), -1)
    same = grouped[1:] == grouped[:-1]
    earlier[order[:-1]] = np.where(same, by_step[1:], -1)
    held = np.where(earlier >= 0, source[np.maximum(earlier, 0)], picks)
    yield from held[::-1].tolist()
