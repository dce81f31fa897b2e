"""The ``chunk`` stage: documents become chunks of words or tokens with offsets.

Writes ``chunks.parquet`` (chunk id, corpus, document and entry ids, ordinal, character and word
offsets, text), ``drops.parquet`` (documents with no text, with the reason) and ``stats.json``.
"""

from __future__ import annotations

from pathlib import Path

from builders.drops import DROP_SCHEMA, DROPS, Drop
from pipelines.embed.chunk import chunk_stream
from pipelines.embed.documents import read_documents
from pipelines.embed.records import CHUNK_SCHEMA
from pipelines.embed.settings import ChunkSettings
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

CHUNKS = "chunks.parquet"


def run_chunk(
    settings: ChunkSettings, *, documents: Path, haystacks: Path, out: Path
) -> StageStats:
    """Chunk every document of the configured corpora (``web``: ``documents``, ``summhay``:
    ``haystacks``); write chunks, skips and stats."""
    with stage_run("chunk", out) as run:
        docs = read_documents(settings.corpora, {"web": documents, "summhay": haystacks})
        stats = run.stats
        stats.counts.update({"documents": 0, "chunks": 0})
        with (
            TableWriter(run.scratch / CHUNKS, CHUNK_SCHEMA, batch_rows=1024) as chunks,
            TableWriter(run.scratch / DROPS, DROP_SCHEMA) as skipped,
        ):
            if settings.executor == "ray":
                from pipelines.embed.ray_executor import ray_chunk_stream

                stream = ray_chunk_stream(docs, settings)
            else:
                stream = chunk_stream(docs, settings)
            for doc, made, reason in progress_iter(stream, "chunk: documents"):
                stats.update("documents")
                stats.update(f"documents_{doc['corpus']}")
                if reason:
                    skipped.write(
                        Drop.of(
                            "chunk",
                            doc["corpus"],
                            "document",
                            doc["document_id"],
                            "chunk",
                            reason,
                            entry_id=doc["entry_id"],
                        ).to_row()
                    )
                    stats.drop(reason)
                for chunk in made:
                    chunks.write(chunk.to_row())
                    stats.update("chunks")
                    stats.update("chunk_words", chunk.words)
        run.extra["settings"] = {
            "size": settings.size,
            "overlap": settings.overlap,
            "unit": settings.unit,
        }
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    c = stats.counts
    return f"chunk: {c['documents']} documents -> {c['chunks']} chunks -> {out}/"
