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
from pathlib import Path

from pipelines.embed.agreement import check_agreement
from pipelines.embed.cache import EmbeddingCache
from pipelines.embed.calibrate import calibrated
from pipelines.embed.encoder import build_encoder
from pipelines.embed.pending import embed_pending, queue_missing, throughput
from pipelines.embed.settings import EmbedSettings
from pipelines.embed.vectors import write_vectors
from pipelines.errors import MissingInputError
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

VECTORS = "vectors"


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
        sample = queue_missing(settings, chunks, fingerprint, cache, todo, stats)
        # 2. embed what is missing, committing block by block
        if stats.counts["embedded"] and sample and not run.extra["calibration"]["measured"]:
            run.extra["agreement"] = check_agreement(settings, encoder, sample)
        done, seconds = embed_pending(settings, encoder, cache, todo, stats.counts["embedded"])
        shutil.rmtree(todo)
        # 3. the vectors in chunk order, from the cache
        write_vectors(settings, chunks, encoder, cache, run.scratch / VECTORS)
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
        run.extra["throughput"] = throughput(done, seconds)
    cache.close()
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    c = stats.counts
    return (
        f"embed: {c['chunks']} chunks, {c['cache_hits']} from the cache, {c['embedded']} "
        f"embedded -> {out}/"
    )
