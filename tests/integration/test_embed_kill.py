"""The embed stage killed with SIGKILL half way: the rerun embeds only what the cache lacks,
leaves no half-written output, and ends equal to an uninterrupted run."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from pipelines.embed.settings import ChunkSettings, EmbedSettings
from pipelines.stages.chunk import run_chunk
from pipelines.stages.embed import run_embed
from tests.pipelines.stages.test_embed_stage import write_documents
from tests.support.snapshot import ROOT

pytestmark = pytest.mark.integration

CHILD = """
import sys
from pathlib import Path
from pipelines.embed.settings import EmbedSettings
from pipelines.stages.embed import run_embed
run_embed(EmbedSettings.model_validate_json(sys.argv[1]), chunks=Path(sys.argv[2]), out=Path(sys.argv[3]))
"""


def cached_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_killed_embed_resumes_without_recomputing(tmp_path: Path, passages: list[str]) -> None:
    docs = tmp_path / "documents.parquet"
    # 119 chunks, 8 blocks of 16: the kill comes after 3 blocks, with 5 (~2 s) still to go
    write_documents(docs, passages[:20])
    run_chunk(
        ChunkSettings(size=32),
        documents=docs,
        haystacks=tmp_path / "absent.parquet",
        out=tmp_path / "chunk",
    )
    chunks = tmp_path / "chunk" / "chunks.parquet"
    texts = pq.read_table(chunks).column("text").to_pylist()
    total = len(set(texts))  # each distinct text is embedded once
    settings = EmbedSettings(cache=tmp_path / "killed.sqlite", block_rows=16, agreement_sample=0)
    out = tmp_path / "killed"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, settings.model_dump_json(), str(chunks), str(out)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 120
    while cached_rows(settings.cache) < total // 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(10)
    stored = cached_rows(settings.cache)
    assert 0 < stored < total, "killed half way"
    assert not (out / "vectors").exists(), "no output before the stage finishes"

    resumed = run_embed(settings, chunks=chunks, out=out)
    assert resumed.counts["embedded"] == total - stored
    assert resumed.counts["cache_hits"] + resumed.counts["embedded"] <= len(texts)

    clean = run_embed(
        settings.model_copy(update={"cache": tmp_path / "clean.sqlite"}),
        chunks=chunks,
        out=tmp_path / "clean",
    )
    assert clean.counts["embedded"] == total
    a = pq.read_table(out / "vectors" / "embeddings.parquet")
    b = pq.read_table(tmp_path / "clean" / "vectors" / "embeddings.parquet")
    assert a.column("chunk_id").equals(b.column("chunk_id"))
    va, vb = (np.array(t.column("vector").to_pylist(), dtype=np.float32) for t in (a, b))
    # bfloat16 batches differ in composition between the runs: equal within half precision
    assert np.allclose(va, vb, atol=4e-3)
    cos = np.sum(va * vb, axis=1) / np.linalg.norm(va, axis=1) / np.linalg.norm(vb, axis=1)
    assert cos.min() >= 0.9999
    assert not [p for p in out.iterdir() if p.name.startswith(".tmp")]
