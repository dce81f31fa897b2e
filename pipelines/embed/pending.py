"""The texts the embedding cache does not hold yet: queued once each in a to-do file, then
embedded block by block (locally, or on Ray), each finished block committed to the cache, so a
killed run loses at most the block in flight."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipelines.embed.cache import EmbeddingCache, text_key
from pipelines.embed.encoder import Encoder, EncodeStats
from pipelines.embed.records import read_blocks
from pipelines.embed.settings import EmbedSettings
from pipelines.outputs import ShardedTableWriter
from pipelines.progress import progress_iter
from pipelines.stats import StageStats

TODO_SCHEMA = pa.schema([("key", pa.string()), ("text", pa.string())])


def queue_missing(
    settings: EmbedSettings, chunks: Path, fingerprint: str, cache: EmbeddingCache, todo: Path,
    stats: StageStats,
) -> list[str]:  # fmt: skip
    """Write the texts the cache does not hold yet to ``todo`` (once each); return a sample of
    them for the agreement check."""
    queued: set[str] = set()
    sample: list[str] = []
    with ShardedTableWriter(todo, TODO_SCHEMA, settings.block_rows) as todo_out:
        for block in read_blocks(chunks, settings.block_rows, ["chunk_id", "text"]):
            keys = [text_key(fingerprint, t) for t in block["text"]]
            hits = cache.get_many(keys)
            stats.update("chunks", len(keys))
            for key, text in zip(keys, block["text"], strict=True):
                if key in hits:
                    stats.update("cache_hits")
                elif key not in queued:
                    queued.add(key)
                    todo_out.write({"key": key, "text": text})
                    if len(sample) < settings.agreement_sample:
                        sample.append(text)
    stats.update("embedded", len(queued))
    return sample


def embed_local(
    encoder: Encoder, cache: EmbeddingCache, todo: Path, block_rows: int, total: int
) -> EncodeStats:
    """Embed the to-do texts block by block, committing each block to the cache."""
    done = EncodeStats()
    blocks = read_blocks(todo, block_rows, ["key", "text"])
    for block in progress_iter(blocks, "embed: blocks", total=-(-total // block_rows)):
        vectors, stats = encoder.encode_with_stats(block["text"])
        cache.put_many(zip(block["key"], vectors, strict=True))
        done.add(stats)
    return done


def embed_pending(
    settings: EmbedSettings, encoder: Encoder, cache: EmbeddingCache, todo: Path, total: int
) -> tuple[EncodeStats, float]:
    """Embed the ``total`` queued texts of ``todo`` with ``settings.executor``; return what the
    encoder did and the seconds it took."""
    done = EncodeStats()
    started = time.monotonic()
    if total:
        if settings.executor == "ray":
            from pipelines.embed.ray_executor import ray_embed

            done = ray_embed(settings, cache, todo)
        else:
            done = embed_local(encoder, cache, todo, settings.block_rows, total)
    return done, time.monotonic() - started


def throughput(done: EncodeStats, seconds: float) -> dict[str, Any]:
    """The ``throughput`` record of ``stats.json``: tokens, padding, batches and speed."""
    return {
        "tokens": done.tokens,
        "padded_tokens": done.padded_tokens,
        "padding_ratio": round(done.padding, 4),
        "batches": done.batches,
        "seconds": round(seconds, 3),
        "tokens_per_s": round(done.tokens / seconds, 1) if seconds and done.tokens else 0.0,
    }
