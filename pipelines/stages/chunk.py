"""The ``chunk`` stage: documents become chunks of words or tokens with offsets.

Writes ``chunks.parquet`` (chunk id, corpus, document and entry ids, ordinal, character and word
offsets, text), ``skipped.parquet`` (documents with no text, with the reason) and ``stats.json``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pipelines.embed.chunk import Offsets, chunk_spans
from pipelines.embed.documents import read_documents
from pipelines.embed.records import CHUNK_SCHEMA, SKIPPED_SCHEMA
from pipelines.embed.settings import ChunkSettings
from pipelines.outputs import TableWriter, staged_outputs, write_json
from pipelines.progress import progress_iter
from pipelines.stats import StageStats

CHUNKS = "chunks.parquet"
SKIPPED = "skipped.parquet"


def chunk_id(document_id: str, ordinal: int) -> str:
    """Stable id of a chunk: its document and its place in it."""
    return f"{document_id}#{ordinal}"


def token_offsets(tokenizer: str | None) -> Offsets:
    """Character spans of a fast tokenizer's tokens (no special tokens, no truncation)."""
    from pipelines.retrieval.models import load_tokenizer

    tok = load_tokenizer(tokenizer)

    def offsets(text: str) -> list[tuple[int, int]]:
        encoded = tok(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [tuple(span) for span in encoded["offset_mapping"]]

    return offsets


def chunk_document(
    doc: dict[str, Any], settings: ChunkSettings, offsets: Offsets | None
) -> tuple[list[dict[str, Any]], str]:
    """The chunk rows of one document, or none and the reason it has none."""
    text = doc["text"] or ""
    if not text.strip():
        return [], "empty" if not text else "whitespace_only"
    rows = []
    for span in chunk_spans(text, settings.size, settings.overlap, offsets):
        rows.append(
            {
                "chunk_id": chunk_id(doc["document_id"], span.ordinal),
                "corpus": doc["corpus"],
                "document_id": doc["document_id"],
                "entry_id": doc["entry_id"],
                "ordinal": span.ordinal,
                "char_start": span.char_start,
                "char_end": span.char_end,
                "word_start": span.word_start,
                "word_end": span.word_end,
                "words": span.word_end - span.word_start,
                "text": text[span.char_start : span.char_end],
            }
        )
    return rows, ""


def chunk_stream(
    docs: Iterable[dict[str, Any]], settings: ChunkSettings
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]], str]]:
    """``(document, chunk rows, skip reason)`` for every document, in order."""
    offsets = token_offsets(settings.tokenizer) if settings.unit == "tokens" else None
    for doc in docs:
        rows, reason = chunk_document(doc, settings, offsets)
        yield doc, rows, reason


def run_chunk(settings: ChunkSettings, paths: dict[str, Path], out_dir: Path) -> StageStats:
    """Chunk every document of the configured corpora; write chunks, skips and stats."""
    stats = StageStats("chunk")
    stats.counts.update({"documents": 0, "chunks": 0})
    docs = read_documents(settings.corpora, paths)
    with staged_outputs(out_dir) as scratch:
        with (
            TableWriter(scratch / CHUNKS, CHUNK_SCHEMA, batch_rows=1024) as chunks,
            TableWriter(scratch / SKIPPED, SKIPPED_SCHEMA) as skipped,
        ):
            if settings.executor == "ray":
                from pipelines.embed.ray_executor import ray_chunk_stream

                stream = ray_chunk_stream(docs, settings)
            else:
                stream = chunk_stream(docs, settings)
            for doc, rows, reason in progress_iter(stream, "chunk: documents"):
                stats.update("documents")
                stats.update(f"documents_{doc['corpus']}")
                if reason:
                    skipped.write(
                        {k: doc[k] for k in ("corpus", "document_id", "entry_id")}
                        | {"reason": reason}
                    )
                    stats.drop(reason)
                for row in rows:
                    chunks.write(row)
                    stats.update("chunks")
                    stats.update("chunk_words", row["words"])
        stats.finish()
        summary = stats.to_dict()
        summary["settings"] = {
            "size": settings.size,
            "overlap": settings.overlap,
            "unit": settings.unit,
        }
        write_json(scratch / "stats.json", summary)
    return stats
