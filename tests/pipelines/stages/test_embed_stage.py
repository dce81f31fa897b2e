"""The chunk and embed stages: outputs, incremental rebuilds, the agreement gate, FAISS."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders.drops import DROP_SCHEMA, DROPS, Drop
from pipelines.embed.agreement import AgreementError
from pipelines.embed.records import CHUNK_SCHEMA
from pipelines.embed.settings import ChunkSettings, EmbedSettings
from pipelines.outputs import TableWriter
from pipelines.settings import Params
from pipelines.stages.chunk import run_chunk
from pipelines.stages.embed import run_embed
from tests.support.snapshot import ROOT


def write_documents(path: Path, texts: list[str]) -> None:
    rows = [
        {"doc_id": f"d{i}", "event_id": f"e{i % 3}", "status": "ok", "text": t}
        for i, t in enumerate(texts)
    ]
    rows.append({"doc_id": "dead", "event_id": "e0", "status": "dead", "text": ""})
    rows.append({"doc_id": "blank", "event_id": "e1", "status": "ok", "text": "  \n "})
    pq.write_table(pa.Table.from_pylist(rows), path)


@pytest.fixture()
def chunked(tmp_path: Path, passages: list[str]) -> Path:
    docs = tmp_path / "documents.parquet"
    write_documents(docs, passages[:20])
    stats = run_chunk(
        ChunkSettings(size=64, overlap=8),
        documents=docs,
        haystacks=tmp_path / "absent.parquet",
        out=tmp_path / "chunk",
    )
    assert stats.counts["documents"] == 21 and stats.dropped == {"whitespace_only": 1}
    return tmp_path / "chunk" / "chunks.parquet"


def settings(tmp_path: Path, **overrides: object) -> EmbedSettings:
    caches = {"cache": tmp_path / "cache.sqlite", "calibration": tmp_path / "calibration.json"}
    return EmbedSettings.model_validate({**caches, **overrides})


def test_chunk_stage_writes_chunks_and_skips(chunked: Path) -> None:
    table = pq.read_table(chunked)
    assert table.schema.equals(CHUNK_SCHEMA, check_metadata=False)
    skipped = pq.read_table(chunked.parent / "drops.parquet")
    assert skipped.schema.equals(DROP_SCHEMA, check_metadata=False)
    assert [Drop.from_row(r) for r in skipped.to_pylist()] == [
        Drop(
            "chunk", "web", "document", "blank", "chunk", "whitespace_only", "", {"entry_id": "e1"}
        )
    ]
    rows = table.to_pylist()
    assert all(1 <= r["words"] <= 64 for r in rows) and len({r["chunk_id"] for r in rows}) == len(
        rows
    )
    assert "dead" not in {r["document_id"] for r in rows}


def test_embed_writes_one_float16_vector_per_chunk_in_order(tmp_path: Path, chunked: Path) -> None:
    embed = settings(tmp_path, faiss=True, dtype="bfloat16")
    stats = run_embed(embed, chunks=chunked, out=tmp_path / "embed")
    out = tmp_path / "embed" / "vectors"
    table = pq.read_table(out / "embeddings.parquet")
    assert (
        table.column("chunk_id").to_pylist()
        == pq.read_table(chunked).column("chunk_id").to_pylist()
    )
    assert table.schema.field("vector").type == pa.list_(pa.float16())
    vectors = np.array(table.column("vector").to_pylist(), dtype=np.float32)
    assert vectors.shape == (table.num_rows, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=2e-3)
    saved = json.loads((tmp_path / "embed" / "stats.json").read_text())
    assert saved["counts"]["embedded"] == stats.counts["chunks"] == table.num_rows
    assert saved["agreement"]["mode"] == "bfloat16" and saved["agreement"]["min_cosine"] >= 0.999
    assert 0 <= saved["throughput"]["padding_ratio"] < 0.2 and saved["throughput"]["tokens"] > 0

    import faiss

    index = faiss.read_index(str(out / "index.faiss"))
    assert index.ntotal == table.num_rows
    _, found = index.search(vectors[:5], 1)
    assert found[:, 0].tolist() == [0, 1, 2, 3, 4]


def test_rebuild_embeds_only_new_chunks(tmp_path: Path, passages: list[str]) -> None:
    docs = tmp_path / "documents.parquet"
    write_documents(docs, passages[:20])
    run_chunk(
        ChunkSettings(),
        documents=docs,
        haystacks=tmp_path / "absent.parquet",
        out=tmp_path / "chunk",
    )
    chunks = tmp_path / "chunk" / "chunks.parquet"
    first = run_embed(settings(tmp_path), chunks=chunks, out=tmp_path / "embed")
    before = pq.read_table(tmp_path / "embed" / "vectors" / "embeddings.parquet")
    # new events bring new documents; the old ones keep their text
    write_documents(docs, passages[:30])
    run_chunk(
        ChunkSettings(),
        documents=docs,
        haystacks=tmp_path / "absent.parquet",
        out=tmp_path / "chunk",
    )
    second = run_embed(settings(tmp_path), chunks=chunks, out=tmp_path / "embed")
    assert second.counts["cache_hits"] == first.counts["chunks"]
    assert second.counts["embedded"] == second.counts["chunks"] - first.counts["chunks"] > 0
    after = pq.read_table(tmp_path / "embed" / "vectors" / "embeddings.parquet")
    assert after.slice(0, before.num_rows).equals(before)


def test_int8_is_refused_below_the_agreement_floor(tmp_path: Path, chunked: Path) -> None:
    with pytest.raises(AgreementError, match=r"embed mode int8 agrees with float32 at mean cosine"):
        run_embed(settings(tmp_path, quantize="int8"), chunks=chunked, out=tmp_path / "embed")
    assert not (tmp_path / "embed" / "vectors").exists()
    stats = run_embed(
        settings(tmp_path, quantize="int8", min_cosine=0.9, min_overlap=0.5),
        chunks=chunked,
        out=tmp_path / "embed",
    )
    saved = json.loads((tmp_path / "embed" / "stats.json").read_text())
    assert saved["agreement"]["mode"] == "int8" and saved["encoder"]["quantize"] == "int8"
    assert 0.9 <= saved["agreement"]["mean_cosine"] < 0.999
    assert stats.counts["embedded"] == stats.counts["chunks"]


def test_missing_inputs_name_the_stage_to_run(tmp_path: Path, params: Params) -> None:
    from pipelines.dag.invoke import Workspace, run_stage
    from pipelines.errors import MissingInputError

    where = Workspace(ROOT, ROOT / "params.yaml", data=tmp_path)
    with pytest.raises(MissingInputError, match="the chunk stage writes it: run 'dvc repro chunk'"):
        run_stage("embed", params, where)
    with pytest.raises(MissingInputError, match="the web stage writes it: run 'dvc repro web'"):
        run_stage("chunk", params, where)
    # a path the table does not know still names what is missing
    with pytest.raises(MissingInputError, match=r"none\.parquet \(corpus 'web'\)"):
        run_chunk(
            ChunkSettings(),
            documents=tmp_path / "none.parquet",
            haystacks=tmp_path / "absent.parquet",
            out=tmp_path / "chunk",
        )
    assert not (tmp_path / "embed").exists() and not (tmp_path / "chunk").exists()
    assert not list(tmp_path.glob(".*.tmp-*"))  # no scratch folder left beside them


def test_write_table_appends_after_buffered_rows(tmp_path: Path) -> None:
    schema = pa.schema([("a", pa.int64())])
    with TableWriter(tmp_path / "t.parquet", schema) as writer:
        writer.write({"a": 1})
        writer.write_table(pa.table({"a": [2, 3]}))
    assert pq.read_table(tmp_path / "t.parquet").column("a").to_pylist() == [1, 2, 3]


def _haystacks(path: Path, documents: dict[str, list[str]]) -> None:
    """A haystacks table with just what the chunk stage reads: topic ids and document texts."""
    rows = [
        {
            "topic_id": topic,
            "documents": [{"document_id": f"D{i}", "text": t} for i, t in enumerate(texts)],
        }
        for topic, texts in documents.items()
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)


def test_documents_without_a_token_and_haystacks_without_documents_leave_the_rest_alone(
    tmp_path: Path, passages: list[str]
) -> None:
    settings = ChunkSettings(corpora=["web", "summhay"], size=64, unit="tokens")
    docs = tmp_path / "documents.parquet"
    write_documents(docs, passages[:6])
    good = {"t1": passages[6:8]}
    outs = {}
    for name, topics in (
        ("good", good),
        ("degenerate", {**good, "t2": [], "t3": ["\u200b\u200c"]}),
    ):
        _haystacks(tmp_path / f"{name}.parquet", topics)
        outs[name] = run_chunk(
            settings, documents=docs, haystacks=tmp_path / f"{name}.parquet", out=tmp_path / name
        )
    assert (tmp_path / "degenerate" / "chunks.parquet").read_bytes() == (
        tmp_path / "good" / "chunks.parquet"
    ).read_bytes()
    drops = [Drop.from_row(r) for r in pq.read_table(tmp_path / "degenerate" / DROPS).to_pylist()]
    assert [(d.group, d.item_id, d.reason) for d in drops] == [
        ("web", "blank", "whitespace_only"),
        ("summhay", "t3/D0", "no_tokens"),
    ]
    assert outs["degenerate"].dropped == {"whitespace_only": 1, "no_tokens": 1}
    assert outs["degenerate"].counts["documents"] == outs["good"].counts["documents"] + 1


def _vectors(folder: Path) -> tuple[list[str], np.ndarray]:
    table = pq.read_table(folder / "vectors" / "embeddings.parquet")
    ids = table.column("chunk_id").to_pylist()
    return ids, np.array(table.column("vector").to_pylist(), dtype=np.float32).reshape(-1, 384)


def test_no_chunks_give_an_empty_table_and_an_empty_text_leaves_the_others_alone(
    tmp_path: Path, chunked: Path
) -> None:
    table = pq.read_table(chunked).slice(0, 6)
    rows = table.to_pylist()
    empty = rows[0] | {"chunk_id": "empty#0", "document_id": "empty", "text": ""}
    inputs = {
        "none": table.slice(0, 0),
        "good": table,
        "beside": pa.Table.from_pylist([*rows[:3], empty, *rows[3:]], schema=table.schema),
    }
    stats = {}
    for name, chunks in inputs.items():
        pq.write_table(chunks, tmp_path / f"{name}.parquet")
        stats[name] = run_embed(
            settings(tmp_path / name, dtype="float32"),
            chunks=tmp_path / f"{name}.parquet",
            out=tmp_path / name,
        )
    assert stats["none"].counts["chunks"] == 0 and _vectors(tmp_path / "none")[1].shape == (0, 384)
    ids, beside = _vectors(tmp_path / "beside")
    good_ids, good = _vectors(tmp_path / "good")
    assert ids == [*good_ids[:3], "empty#0", *good_ids[3:]]
    assert stats["beside"].counts["embedded"] == 7 and np.isfinite(beside).all()
    assert np.allclose(np.delete(beside, 3, axis=0), good, atol=1e-3)
