"""Split a document into chunks of words or tokens, with character and word offsets.

A document shorter than one chunk yields one chunk; an empty or whitespace-only text yields none
(the stage records it). Windows start every ``size - overlap`` units; the last window ends at the
document's end, so no text is lost and no chunk is empty.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

_WORD = re.compile(r"\S+")

Offsets = Callable[[str], list[tuple[int, int]]]
"""Character spans of a text's tokens, e.g. a fast tokenizer's offset mapping."""


@dataclass(frozen=True)
class Span:
    """One chunk of a document: ordinal, character span, word span (ends exclusive)."""

    ordinal: int
    char_start: int
    char_end: int
    word_start: int
    word_end: int


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of whitespace-separated words."""
    return [m.span() for m in _WORD.finditer(text)]


def windows(n: int, size: int, overlap: int) -> Iterator[tuple[int, int]]:
    """``[start, end)`` unit windows over ``n`` units."""
    if n == 0:
        return
    step = size - overlap
    start = 0
    while True:
        end = min(start + size, n)
        yield start, end
        if end == n:
            return
        start += step


def chunk_spans(
    text: str, size: int, overlap: int = 0, token_offsets: Offsets | None = None
) -> list[Span]:
    """Chunks of ``size`` words (or tokens, with ``token_offsets``) overlapping by ``overlap``."""
    words = word_spans(text)
    if not words:
        return []
    units: Sequence[tuple[int, int]] = words if token_offsets is None else token_offsets(text)
    units = [u for u in units if u[1] > u[0]]
    starts = [w[0] for w in words]
    spans = []
    for ordinal, (a, b) in enumerate(windows(len(units), size, overlap)):
        char_start, char_end = units[a][0], units[b - 1][1]
        word_start = bisect.bisect_right(starts, char_start) - 1
        word_end = bisect.bisect_left(starts, char_end)
        spans.append(Span(ordinal, char_start, char_end, max(word_start, 0), word_end))
    return spans
