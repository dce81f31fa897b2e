"""The ``embed`` stage: a vector for every chunk, computed once per text and encoder.

1. Scan the chunks; texts already in the embedding cache (same encoder, precision and
   quantization) are hits, the rest go to a to-do file.
2. Embed the to-do texts block by block (locally, or on Ray), committing each finished block to
   the cache, so a killed run loses at most the block in flight.
3. Write ``vectors/embeddings.parquet`` (chunk id, model, vector) in chunk order from the cache,
   and ``vectors/index.faiss`` (inner product, same row order) when ``faiss`` is on.

Before a fast mode (bfloat16, float16, int8) embeds anything, a sample is compared with float32;
below ``min_cosine`` or ``min_overlap`` the stage stops and says which setting to change.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.embed.agreement import agreement
from pipelines.embed.cache import EmbeddingCache, text_key
from pipelines.embed.calibrate import calibrate
from pipelines.embed.encoder import Encoder, EncodeStats, build_encoder
from pipelines.embed.records import embedding_schema
from pipelines.embed.settings import EmbedSettings
from pipelines.errors import BenchsmithError, MissingInputError
from pipelines.outputs import ShardedTableWriter, TableWriter
from pipelines.progress import progress_iter
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

VECTORS = "vectors"
EMBEDDINGS = "embeddings.parquet"
INDEX = "index.faiss"
TODO_SCHEMA = pa.schema([("key", pa.string()), ("text", pa.string())])


class AgreementError(BenchsmithError):
    """A fast embedding mode strays too far from float32."""


def _blocks(path: Path, size: int, columns: list[str]) -> Iterator[dict[str, list[Any]]]:
    """Blocks of a Parquet file, or of a folder of shards in name order."""
    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    for file in files:
        for batch in pq.ParquetFile(file).iter_batches(batch_size=size, columns=columns):
            yield batch.to_pydict()


def check_agreement(settings: EmbedSettings, encoder: Encoder, texts: list[str]) -> dict[str, Any]:
    """Compare ``encoder`` with float32 on ``texts``; raise below the floors."""
    plain = encoder.backend == "torch" and encoder.quantize == "none"
    if plain and encoder.precision == "float32":
        return {"mode": "float32", "checked": False}
    reference = build_encoder(settings, dtype="float32", quantize="none", backend="torch")
    result = agreement(reference.encode(texts), encoder.encode(texts))
    mode = encoder.quantize if encoder.quantize != "none" else encoder.precision
    mode = mode if encoder.backend == "torch" else f"{encoder.backend}-{mode}"
    if result.mean_cosine < settings.min_cosine or result.overlap < settings.min_overlap:
        raise AgreementError(
            f"embed mode {mode} agrees with float32 at mean cosine {result.mean_cosine:.5f} and "
            f"top-{result.top_k} overlap {result.overlap:.3f} on {result.texts} texts, below "
            f"embed.min_cosine {settings.min_cosine} / embed.min_overlap {settings.min_overlap}; "
            "use embed.dtype float32 and embed.quantize none, or lower the floors"
        )
    return {"mode": mode, "checked": True, **result.as_dict()}


def calibrated(settings: EmbedSettings, chunks: Path) -> tuple[EmbedSettings, dict[str, Any]]:
    """``settings`` with every auto choice made for this machine (:mod:`calibrate`), and the
    calibration's record for ``stats.json``."""
    import torch

    cuda = settings.device == "cuda" or (settings.device == "auto" and torch.cuda.is_available())
    total = pq.ParquetFile(chunks).metadata.num_rows
    sample = next(_blocks(chunks, settings.calibrate_texts, ["text"]), {"text": []})["text"]
    result = calibrate(settings, sample, total, cuda=cuda)
    return settings.model_copy(update=result.chosen.options()), result.as_dict()


def embed_local(
    encoder: Encoder, cache: EmbeddingCache, todo: Path, block_rows: int, total: int
) -> EncodeStats:
    """Embed the to-do texts block by block, committing each block to the cache."""
    done = EncodeStats()
    blocks = _blocks(todo, block_rows, ["key", "text"])
    for block in progress_iter(blocks, "embed: blocks", total=-(-total // block_rows)):
        vectors, stats = encoder.encode_with_stats(block["text"])
        cache.put_many(zip(block["key"], vectors, strict=True))
        done.add(stats)
    return done


def _queue_missing(
    settings: EmbedSettings, chunks: Path, fingerprint: str, cache: EmbeddingCache, todo: Path,
    stats: StageStats,
) -> list[str]:  # fmt: skip
    """Write the texts the cache does not hold yet to ``todo`` (once each); return a sample of
    them for the agreement check."""
    queued: set[str] = set()
    sample: list[str] = []
    with ShardedTableWriter(todo, TODO_SCHEMA, settings.block_rows) as todo_out:
        for block in _blocks(chunks, settings.block_rows, ["chunk_id", "text"]):
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


def _write_vectors(
    settings: EmbedSettings, chunks: Path, encoder: Encoder, cache: EmbeddingCache, folder: Path
) -> None:
    """The vectors in chunk order, from the cache (and the faiss index when asked for)."""
    folder.mkdir()
    fingerprint = encoder.fingerprint()
    index = None
    schema = embedding_schema(settings.vector_dtype)
    with TableWriter(folder / EMBEDDINGS, schema, batch_rows=1024) as out:
        for block in _blocks(chunks, settings.block_rows, ["chunk_id", "text"]):
            keys = [text_key(fingerprint, t) for t in block["text"]]
            found = cache.get_many(keys)
            missing = [c for c, k in zip(block["chunk_id"], keys, strict=True) if k not in found]
            if missing:
                raise BenchsmithError(f"embedding cache lost vectors of {missing[:3]}; rerun")
            vectors = np.stack([found[k] for k in keys])
            if settings.faiss:
                index = _add_to_index(index, vectors)
            out.write_table(vector_table(block["chunk_id"], encoder.name, vectors, schema))
    if index is not None:
        import faiss

        faiss.write_index(index, str(folder / INDEX))


def run_embed(settings: EmbedSettings, *, chunks: Path, out: Path) -> StageStats:
    """Embed every chunk of ``chunks``; write vectors (and the index) plus stats."""
    with stage_run("embed", out) as run:
        if not chunks.is_file():
            raise MissingInputError(f"missing {chunks} (the chunks)", chunks)
        settings, run.extra["calibration"] = calibrated(settings, chunks)
        encoder = build_encoder(settings)
        fingerprint = encoder.fingerprint()
        cache = EmbeddingCache(settings.cache)
        stats = run.stats
        stats.counts.update({"chunks": 0, "cache_hits": 0, "embedded": 0})
        # 1. what the cache does not hold yet
        todo = run.scratch / "todo"
        sample = _queue_missing(settings, chunks, fingerprint, cache, todo, stats)
        # 2. embed what is missing, committing block by block
        done = EncodeStats()
        if stats.counts["embedded"] and sample and not run.extra["calibration"]["measured"]:
            run.extra["agreement"] = check_agreement(settings, encoder, sample)
        started = time.monotonic()
        if stats.counts["embedded"]:
            if settings.executor == "ray":
                from pipelines.embed.ray_executor import ray_embed

                done = ray_embed(settings, cache, todo)
            else:
                done = embed_local(
                    encoder, cache, todo, settings.block_rows, stats.counts["embedded"]
                )
        seconds = time.monotonic() - started
        shutil.rmtree(todo)
        # 3. the vectors in chunk order, from the cache
        _write_vectors(settings, chunks, encoder, cache, run.scratch / VECTORS)
        run.extra["encoder"] = {
            "name": encoder.name,
            "model": encoder.spec.model or "sentence-transformers/all-MiniLM-L6-v2",
            "fingerprint": fingerprint,
            "device": encoder.devices[0] if len(encoder.devices) == 1 else encoder.devices,
            "dtype": encoder.precision,
            "quantize": encoder.quantize,
            "attention": encoder.attention,
            "batch_tokens": encoder.batch_tokens,
            "executor": settings.executor,
        }
        run.extra["throughput"] = {
            "tokens": done.tokens,
            "padded_tokens": done.padded_tokens,
            "padding_ratio": round(done.padding, 4),
            "batches": done.batches,
            "seconds": round(seconds, 3),
            "tokens_per_s": round(done.tokens / seconds, 1) if seconds and done.tokens else 0.0,
        }
    cache.close()
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    c = stats.counts
    return (
        f"embed: {c['chunks']} chunks, {c['cache_hits']} from the cache, {c['embedded']} "
        f"embedded -> {out}/"
    )


def vector_table(
    chunk_ids: list[str], model: str, vectors: np.ndarray, schema: pa.Schema
) -> pa.Table:
    """Rows of chunk id, model and vector, built from the array without a Python loop."""
    value_type = schema.field("vector").type.value_type
    flat = pa.array(
        vectors.astype(np.float16 if value_type == pa.float16() else np.float32).ravel(),
        type=value_type,
    )
    offsets = pa.array(np.arange(0, vectors.size + 1, vectors.shape[1], dtype=np.int32))
    return pa.table(
        {
            "chunk_id": pa.array(chunk_ids, pa.string()),
            "model": pa.array([model] * len(chunk_ids), pa.string()),
            "vector": pa.ListArray.from_arrays(offsets, flat),
        },
        schema=schema,
    )


def _add_to_index(index: Any, vectors: np.ndarray) -> Any:
    try:
        import faiss
    except ImportError:
        raise BenchsmithError(
            "embed.faiss needs the faiss-cpu package (pip install faiss-cpu)"
        ) from None
    if index is None:
        index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index
