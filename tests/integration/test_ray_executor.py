"""The Ray executor on a local Ray cluster with 2 CPUs gives the local executor's output:
the same chunks, the same vectors within float tolerance, and the same LV-Eval baselines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from pipelines.embed.settings import ChunkSettings, EmbedSettings, RaySettings
from pipelines.stages.chunk import run_chunk
from pipelines.stages.embed import run_embed
from tests.pipelines.evaluation.test_lveval_prefill import records, retrieval, run
from tests.pipelines.stages.test_embed_stage import write_documents

pytestmark = pytest.mark.integration

RAY = RaySettings(num_cpus=2, actors=2, batch_rows=16)
__all__ = ["records", "retrieval"]  # fixtures of the LV-Eval baselines' tests


@pytest.fixture(scope="module")
def ray_cluster():
    """One local cluster for the module (the stages join it instead of starting their own)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_chunks_and_vectors_equal_the_local_executor(
    ray_cluster, tmp_path: Path, passages: list[str]
) -> None:
    docs = tmp_path / "documents.parquet"
    write_documents(docs, passages[:30])
    local_chunk = ChunkSettings(size=48, overlap=4)
    run_chunk(
        local_chunk,
        documents=docs,
        haystacks=tmp_path / "absent.parquet",
        out=tmp_path / "local" / "chunk",
    )
    ray_chunk = local_chunk.model_copy(update={"executor": "ray", "ray": RAY})
    run_chunk(
        ray_chunk,
        documents=docs,
        haystacks=tmp_path / "absent.parquet",
        out=tmp_path / "ray" / "chunk",
    )
    for name in ("chunks.parquet", "drops.parquet"):
        local = pq.read_table(tmp_path / "local" / "chunk" / name)
        assert local.num_rows > 0 or name == "drops.parquet"
        assert pq.read_table(tmp_path / "ray" / "chunk" / name).equals(local), name

    chunks = tmp_path / "local" / "chunk" / "chunks.parquet"
    base = {"block_rows": 64, "vector_dtype": "float32"}
    local_embed = EmbedSettings.model_validate({**base, "cache": tmp_path / "local.sqlite"})
    ray_embed = EmbedSettings.model_validate(
        {**base, "cache": tmp_path / "ray.sqlite", "executor": "ray", "ray": RAY.model_dump()}
    )
    run_embed(local_embed, chunks=chunks, out=tmp_path / "local" / "embed")
    stats = run_embed(ray_embed, chunks=chunks, out=tmp_path / "ray" / "embed")
    assert stats.counts["embedded"] == stats.counts["chunks"]
    a = pq.read_table(tmp_path / "local" / "embed" / "vectors" / "embeddings.parquet")
    b = pq.read_table(tmp_path / "ray" / "embed" / "vectors" / "embeddings.parquet")
    assert a.column("chunk_id").equals(b.column("chunk_id"))
    va = np.array(a.column("vector").to_pylist())
    vb = np.array(b.column("vector").to_pylist())
    assert np.allclose(va, vb, atol=5e-3)
    assert np.min(np.sum(va * vb, axis=1)) >= 0.9999
    saved = json.loads((tmp_path / "ray" / "embed" / "stats.json").read_text())
    assert saved["encoder"]["executor"] == "ray" and saved["throughput"]["tokens"] > 0


def test_lveval_baselines_embed_their_chunks_on_ray_as_locally(
    ray_cluster, records: Path, retrieval, tmp_path: Path
) -> None:
    local = run(records, tmp_path / "local", retrieval, tmp_path / "local.sqlite", block_rows=32)
    on_ray = run(
        records, tmp_path / "ray", retrieval, tmp_path / "ray.sqlite",
        block_rows=32, executor="ray", ray=RAY.model_dump(),
    )  # fmt: skip
    prefill = on_ray["dense_prefill"]
    assert prefill["executor"] == "ray" and prefill["throughput"]["tokens"] > 0
    assert prefill["embedded"] == local["dense_prefill"]["embedded"] > 0
    assert on_ray["dense_chunks"]["embedded"] == 0  # every vector came from the Ray actors
    for name in ("retrieval.parquet", "lveval.json"):
        a, b = tmp_path / "local" / name, tmp_path / "ray" / name
        assert a.read_bytes() == b.read_bytes(), name
