"""The embed stage's output: ``embeddings.parquet`` (chunk id, model, vector) in chunk order,
read from the embedding cache, and ``index.faiss`` (inner product, same row order) when asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from pipelines.embed.cache import EmbeddingCache, text_key
from pipelines.embed.encoder import Encoder
from pipelines.embed.records import embedding_schema, read_blocks
from pipelines.embed.settings import EmbedSettings
from pipelines.errors import BenchsmithError
from pipelines.outputs import TableWriter

EMBEDDINGS = "embeddings.parquet"
INDEX = "index.faiss"


def write_vectors(
    settings: EmbedSettings, chunks: Path, encoder: Encoder, cache: EmbeddingCache, folder: Path
) -> None:
    """The vectors in chunk order, from the cache (and the faiss index when asked for)."""
    folder.mkdir()
    fingerprint = encoder.fingerprint()
    index = None
    schema = embedding_schema(settings.vector_dtype)
    with TableWriter(folder / EMBEDDINGS, schema, batch_rows=1024) as out:
        for block in read_blocks(chunks, settings.block_rows, ["chunk_id", "text"]):
            keys = [text_key(fingerprint, t) for t in block["text"]]
            found = cache.get_many(keys)
            missing = [c for c, k in zip(block["chunk_id"], keys, strict=True) if k not in found]
            if missing:
                raise BenchsmithError(f"embedding cache lost vectors of {missing[:3]}; rerun")
            vectors = np.stack([found[k] for k in keys])
            if settings.faiss:
                index = add_to_index(index, vectors)
            out.write_table(vector_table(block["chunk_id"], encoder.name, vectors, schema))
    if index is not None:
        import faiss

        faiss.write_index(index, str(folder / INDEX))


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


def add_to_index(index: Any, vectors: np.ndarray) -> Any:
    """``vectors`` added to the inner-product faiss ``index`` (made at the first call)."""
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
