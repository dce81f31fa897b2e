"""Embedding LV-Eval's chunks before ranking them: each distinct chunk once, in bulk.

A record's context is cut into chunks (:class:`~pipelines.evaluation.lveval.Chunker`), and most
chunks come back in other records: the same passages fill an item's five levels and its four
variants, and the pool of passages is shared by every item. Ranking record by record would
embed a record's new chunks a few at a time. Instead, one pass over the records first queues
every distinct chunk text that the embedding cache lacks (the embed stage's to-do file, once
each), then embeds the queue with the embed stage's executor (``embed.executor``: locally,
block by block; or on Ray, across a cluster's encoder actors), each finished block committed
to the cache. The ranking pass then reads every vector back from the cache. A killed stage
resumes with the blocks already committed; a rerun finds every chunk in the cache.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipelines.embed.cache import EmbeddingCache, digest_key
from pipelines.embed.pending import TODO_SCHEMA, embed_pending, throughput
from pipelines.embed.settings import EmbedSettings
from pipelines.evaluation.lveval import Chunker
from pipelines.evaluation.lveval_scoring import READ_ROWS
from pipelines.outputs import ShardedTableWriter
from pipelines.progress import progress_iter
from pipelines.retrieval.memo import text_digest
from pipelines.retrieval.rankers import CachedDense

LOOKUP_ROWS = 2_048
"""Chunk keys looked up in the embedding cache at a time."""


def contexts(files: Sequence[Path]) -> Iterator[str]:
    """Every record's context, file by file, ``READ_ROWS`` at a time."""
    for path in files:
        with pq.ParquetFile(path, pre_buffer=False) as file:
            rows = file.metadata.num_rows
            batches = file.iter_batches(batch_size=READ_ROWS, columns=["context"])
            label = f"lveval baselines: chunks of {path.stem}"
            for batch in progress_iter(batches, label, -(-rows // READ_ROWS)):
                yield from batch.column("context").to_pylist()


def queue_chunks(
    files: Sequence[Path], chunk_words: int, fingerprint: str, cache: EmbeddingCache, todo: Path,
    block_rows: int,
) -> tuple[int, int]:  # fmt: skip
    """Write every distinct chunk text of ``files`` that ``cache`` lacks to ``todo``; return
    ``(distinct chunks, queued)``."""
    chunker = Chunker(chunk_words)
    seen: set[bytes] = set()
    waiting: dict[str, str] = {}
    queued = 0
    with ShardedTableWriter(todo, TODO_SCHEMA, block_rows) as out:

        def flush() -> int:
            stored = cache.get_many(list(waiting))
            missing = [(k, t) for k, t in waiting.items() if k not in stored]
            for key, text in missing:
                out.write({"key": key, "text": text})
            waiting.clear()
            return len(missing)

        for context in contexts(files):
            for a, b in chunker.spans(context):
                text = context[a:b]
                digest = text_digest(text)
                if digest not in seen:
                    seen.add(digest)
                    waiting[digest_key(fingerprint, digest)] = text
            if len(waiting) >= LOOKUP_ROWS:
                queued += flush()
        queued += flush()
    return len(seen), queued


def executor_settings(embed: EmbedSettings, model: str | None) -> EmbedSettings:
    """The embed settings whose encoders compute exactly the dense retriever's vectors (``model``
    in float32 on torch, unquantized), with the embed stage's executor, Ray and block size."""
    update = {"model": model or "minilm", "dtype": "float32", "quantize": "none"}
    return embed.model_copy(update=update | {"backend": "torch"})


def prefill(
    files: Sequence[Path], chunk_words: int, dense: CachedDense, embed: EmbedSettings,
    scratch: Path,
) -> dict[str, Any]:  # fmt: skip
    """Embed every distinct chunk of ``files`` that the dense retriever's embedding cache
    lacks, with ``embed.executor``; return what was done, for ``stats.json``."""
    assert dense.cache is not None
    settings = executor_settings(embed, dense.model)
    started = time.monotonic()
    todo = scratch / "dense_todo"
    try:
        distinct, queued = queue_chunks(
            files, chunk_words, dense.fingerprint, dense.cache, todo, settings.block_rows
        )
        encoder = dense.scorer.encoder
        done, seconds = embed_pending(settings, encoder, dense.cache, todo, queued)
    finally:
        shutil.rmtree(todo, ignore_errors=True)  # not an output; the cache keeps the vectors
    return {
        "executor": settings.executor,
        "distinct_chunks": distinct,
        "from_cache": distinct - queued,
        "embedded": queued,
        "seconds": round(time.monotonic() - started, 3),
        "throughput": throughput(done, seconds),
    }
