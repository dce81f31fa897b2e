"""Chunking: windows, offsets into the text, short and empty documents, token units."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipelines.embed.chunk import chunk_document, chunk_spans, token_offsets, windows
from pipelines.embed.records import CHUNK_SCHEMA, Chunk
from pipelines.embed.settings import ChunkSettings

TEXT = "  Alpha beta\tgamma delta.\n\nEpsilon zeta eta theta iota kappa  "


@pytest.mark.parametrize(
    ("n", "size", "overlap", "expected"),
    [
        (10, 4, 0, [(0, 4), (4, 8), (8, 10)]),
        (10, 4, 2, [(0, 4), (2, 6), (4, 8), (6, 10)]),
        (3, 256, 0, [(0, 3)]),
        (8, 4, 0, [(0, 4), (4, 8)]),
        (0, 4, 0, []),
    ],
)
def test_windows_cover_every_unit(n: int, size: int, overlap: int, expected: list) -> None:
    assert list(windows(n, size, overlap)) == expected


def test_word_chunks_keep_offsets_into_the_original_text() -> None:
    spans = chunk_spans(TEXT, size=4, overlap=1)
    texts = [TEXT[s.char_start : s.char_end] for s in spans]
    assert texts == [
        "Alpha beta\tgamma delta.",
        "delta.\n\nEpsilon zeta eta",
        "eta theta iota kappa",
    ]
    assert [(s.word_start, s.word_end) for s in spans] == [(0, 4), (3, 7), (6, 10)]
    assert [s.ordinal for s in spans] == [0, 1, 2]


def test_a_short_document_is_one_chunk() -> None:
    (span,) = chunk_spans("just three words", size=256)
    assert (span.char_start, span.char_end, span.word_start, span.word_end) == (0, 16, 0, 3)


@pytest.mark.parametrize(("text", "reason"), [("", "empty"), (" \n\t ", "whitespace_only")])
def test_empty_documents_yield_no_chunk_and_a_reason(text: str, reason: str) -> None:
    doc = {"corpus": "web", "document_id": "d1", "entry_id": "e1", "text": text}
    assert chunk_document(doc, ChunkSettings(), None) == ([], reason)


def test_chunk_rows_carry_ids_and_counts() -> None:
    doc = {"corpus": "web", "document_id": "d1", "entry_id": "e1", "text": TEXT}
    chunks, reason = chunk_document(doc, ChunkSettings(size=4, overlap=0), None)
    assert reason == "" and [c.chunk_id for c in chunks] == ["d1#0", "d1#1", "d1#2"]
    assert [c.words for c in chunks] == [4, 4, 2]
    assert all(c.text == TEXT[c.char_start : c.char_end] for c in chunks)
    # rows match the schema and read back as the same records
    table = pa.Table.from_pylist([c.to_row() for c in chunks], schema=CHUNK_SCHEMA)
    assert [Chunk.from_row(r) for r in table.to_pylist()] == chunks


def test_token_chunks_follow_the_tokenizer() -> None:
    offsets = token_offsets(None)  # MiniLM's WordPiece tokenizer, shipped offline
    text = "Unbelievably, the floodgates held at Meridal on 3 March."
    spans = chunk_spans(text, size=5, overlap=0, token_offsets=offsets)
    tokens = offsets(text)
    assert len(spans) == -(-len(tokens) // 5)
    assert spans[0].char_start == 0 and spans[-1].char_end == len(text)
    # a chunk boundary inside a word still reports the words it touches
    for span in spans:
        assert span.word_start < span.word_end
