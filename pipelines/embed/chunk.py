"""Split documents into chunks of words or tokens, with character and word offsets.

A document shorter than one chunk yields one chunk; an empty or whitespace-only text, or one the
tokenizer finds no token in (zero-width characters only), yields none (the stage records it).
Windows start every ``size - overlap`` units; the last window ends at the document's end, so no
text is lost and no chunk is empty.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pipelines.embed.records import Chunk
from pipelines.embed.settings import ChunkSettings

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


def chunk_id(document_id: str, ordinal: int) -> str:
    """Stable id of a chunk: its document and its place in it."""
    return f"{document_id}#{ordinal}"


def token_offsets(tokenizer: str | None) -> Offsets:
    """Character spans of a fast tokenizer's tokens (no special tokens, no truncation)."""
    from pipelines.embed.models import load_tokenizer

    tok = load_tokenizer(tokenizer)

    def offsets(text: str) -> list[tuple[int, int]]:
        encoded = tok(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [tuple(span) for span in encoded["offset_mapping"]]

    return offsets


def chunk_document(
    doc: dict[str, Any], settings: ChunkSettings, offsets: Offsets | None
) -> tuple[list[Chunk], str]:
    """The chunks of one document, or none and the reason it has none (``empty``,
    ``whitespace_only``, ``no_tokens``)."""
    text = doc["text"] or ""
    if not text.strip():
        return [], "empty" if not text else "whitespace_only"
    chunks = []
    for span in chunk_spans(text, settings.size, settings.overlap, offsets):
        chunks.append(
            Chunk(
                chunk_id=chunk_id(doc["document_id"], span.ordinal),
                corpus=doc["corpus"],
                document_id=doc["document_id"],
                entry_id=doc["entry_id"],
                ordinal=span.ordinal,
                char_start=span.char_start,
                char_end=span.char_end,
                word_start=span.word_start,
                word_end=span.word_end,
                words=span.word_end - span.word_start,
                text=text[span.char_start : span.char_end],
            )
        )
    return chunks, "" if chunks else "no_tokens"


def chunk_stream(
    docs: Iterable[dict[str, Any]], settings: ChunkSettings
) -> Iterator[tuple[dict[str, Any], list[Chunk], str]]:
    """``(document, chunks, skip reason)`` for every document, in order."""
    offsets = token_offsets(settings.tokenizer) if settings.unit == "tokens" else None
    for doc in docs:
        rows, reason = chunk_document(doc, settings, offsets)
        yield doc, rows, reason
