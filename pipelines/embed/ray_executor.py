"""The Ray Data executor: chunk and embed as Ray pipelines, same inputs, same outputs.

``embed``: the to-do file of texts not in the cache is read with ``ray.data.read_parquet`` and
mapped by a pool of encoder actors (one GPU each when ``gpus_per_actor`` is 1, CPU actors
otherwise); the driver commits each returned batch to the embedding cache, so a Ray run resumes
like a local one. ``chunk``: blocks of documents are mapped by Ray tasks, in order.

``ray.address`` joins an existing cluster (``auto`` on a cluster node, ``ray://head:10001`` from
outside); unset, a local cluster is started with ``ray.num_cpus`` CPUs. On a remote cluster the
data folder must be reachable from the workers (shared filesystem), and benchsmith installed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from pipelines.embed.cache import EmbeddingCache
from pipelines.embed.chunk import chunk_stream
from pipelines.embed.encoder import EncodeStats, build_encoder
from pipelines.embed.records import Chunk
from pipelines.embed.settings import ChunkSettings, EmbedSettings, RaySettings
from pipelines.progress import progress_iter


@contextmanager
def ray_session(settings: RaySettings) -> Iterator[Any]:
    """Join or start a Ray cluster for the stage; shut down only what it started."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(
            address=settings.address,
            num_cpus=settings.num_cpus if settings.address is None else None,
            include_dashboard=False,
            log_to_driver=False,
        )
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


class EncoderActor:
    """A Ray actor holding one encoder; maps batches of ``{key, text}`` to vectors."""

    def __init__(self, settings_json: str):
        self.encoder = build_encoder(EmbedSettings.model_validate_json(settings_json))

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors, stats = self.encoder.encode_with_stats([str(t) for t in batch["text"]])
        n = len(batch["key"])
        # batch totals on the first row, so the driver can sum them
        tokens = np.zeros(n, dtype=np.int64)
        padded = np.zeros(n, dtype=np.int64)
        tokens[0], padded[0] = stats.tokens, stats.padded_tokens
        return {"key": batch["key"], "vector": vectors, "tokens": tokens, "padded": padded}


def _read_shard(batch: dict[str, np.ndarray]) -> Any:
    import pyarrow.parquet as pq

    return pq.read_table(str(batch["path"][0]))


def ray_embed(settings: EmbedSettings, cache: EmbeddingCache, todo: Path) -> EncodeStats:
    """Embed the to-do texts on Ray; commit every returned batch to the cache."""
    r = settings.ray
    done = EncodeStats()
    with ray_session(r) as ray:
        # one read task and one block per shard, so every actor gets work (read_parquet would
        # bundle small files into a single block)
        shards = [{"path": str(p)} for p in sorted(todo.glob("*.parquet"))]
        dataset = ray.data.from_items(shards, override_num_blocks=len(shards)).map_batches(
            _read_shard, batch_size=1, batch_format="numpy"
        )
        mapped = dataset.map_batches(
            EncoderActor,
            fn_constructor_kwargs={"settings_json": settings.model_dump_json()},
            concurrency=r.actors,
            num_gpus=r.gpus_per_actor or None,
            num_cpus=None if r.gpus_per_actor else r.cpus_per_actor,
            batch_size=r.batch_rows,
            batch_format="numpy",
        )
        batches = mapped.iter_batches(batch_size=settings.block_rows, batch_format="numpy")
        for batch in progress_iter(batches, "embed: ray blocks"):
            vectors = np.asarray(batch["vector"], dtype=np.float32)
            cache.put_many(zip((str(k) for k in batch["key"]), vectors, strict=True))
            done.texts += len(vectors)
            done.tokens += int(batch["tokens"].sum())
            done.padded_tokens += int(batch["padded"].sum())
    return done


def _chunk_batch(batch: dict[str, np.ndarray], settings_json: str) -> dict[str, np.ndarray]:
    settings = ChunkSettings.model_validate_json(settings_json)
    docs = [
        {k: str(batch[k][i]) for k in ("corpus", "document_id", "entry_id", "text")}
        for i in range(len(batch["document_id"]))
    ]
    results = [(chunks, reason) for _, chunks, reason in chunk_stream(docs, settings)]
    return {
        "document_id": batch["document_id"],
        "rows": np.array(
            [json.dumps([c.to_row() for c in chunks]) for chunks, _ in results], dtype=object
        ),
        "reason": np.array([reason for _, reason in results], dtype=object),
    }


def ray_chunk_stream(
    docs: Iterable[dict[str, Any]], settings: ChunkSettings
) -> Iterator[tuple[dict[str, Any], list[Chunk], str]]:
    """Like :func:`pipelines.embed.chunk.chunk_stream`, with the chunking done by Ray tasks."""
    r = settings.ray
    block = r.batch_rows * max(2, r.actors) * 4
    stream = iter(docs)
    with ray_session(r) as ray:
        while part := list(islice(stream, block)):
            dataset = ray.data.from_items(part, override_num_blocks=max(2, r.actors))
            mapped = dataset.map_batches(
                _chunk_batch,
                fn_kwargs={"settings_json": settings.model_dump_json()},
                batch_size=r.batch_rows,
                batch_format="numpy",
            )
            out = mapped.iter_batches(batch_size=r.batch_rows, batch_format="numpy")
            docs_in_order = iter(part)
            for batch in out:
                for document_id, rows, reason in zip(
                    batch["document_id"], batch["rows"], batch["reason"], strict=True
                ):
                    doc = next(docs_in_order)
                    assert doc["document_id"] == document_id, "Ray changed the order"
                    yield doc, [Chunk.from_row(r) for r in json.loads(rows)], str(reason)
