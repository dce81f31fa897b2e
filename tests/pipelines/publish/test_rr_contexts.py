"""The ``rr_contexts`` config: each entry's RR context as the toolkit's RR baseline read it, so a
harness asks the RR prompt the toolkit asked and scores ROUGE-L against the toolkit's reference."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchsmith_scoring import prompts
from benchsmith_scoring.harness import wikigen_rr_messages
from pipelines.errors import PublishError
from pipelines.evaluation.wikigen import read_entries
from pipelines.publish.registry import RR_RERANKER
from pipelines.publish.views import wikigen_rr_contexts


def rows_of(folder: Path) -> list[dict]:
    return [r for f in sorted(folder.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]


def test_each_row_is_the_prompt_and_reference_the_toolkits_rr_had(hub_export, publish_data):
    published = rows_of(hub_export / "wikigenbench" / "rr_contexts")
    retrieval = pq.read_table(publish_data / "wikigen_baselines" / "retrieval.parquet")
    shown = {r["event_id"]: r["chunk_ids"] for r in retrieval.to_pylist()}
    entries = read_entries(
        publish_data / "wikigen" / "entries.parquet",
        publish_data / "chunk" / "chunks.parquet",
        lambda texts: [0] * len(texts),
    )
    assert sorted(r["event_id"] for r in published) == sorted(e.event_id for e in entries)
    by_id = {e.event_id: e for e in entries}
    with_chunks = 0
    for row in published:
        entry = by_id[row["event_id"]]
        chunks = {c.chunk_id: c for c in entry.chunks}
        assert row["retriever"] == RR_RERANKER and row["split"] == entry.split
        assert [d["chunk_id"] for d in row["documents"]] == shown[row["event_id"]]
        # the toolkit's RR ask (pipelines/evaluation/wikigen.py write_articles)
        documents = [
            {"n": k, "text": chunks[c].text} for k, c in enumerate(shown[entry.event_id], 1)
        ]
        asked = prompts.messages("wikigen/rr", {"title": entry.title, "documents": documents})
        assert wikigen_rr_messages(row) == asked
        assert row["reference"] == entry.reference
        with_chunks += bool(documents)
    assert with_chunks >= len(published) - 1  # the snapshot's entries have chunks


def test_a_context_naming_a_missing_chunk_fails_naming_it(publish_data, tmp_path):
    data = tmp_path / "data"
    (data / "wikigen").mkdir(parents=True)
    (data / "chunk").mkdir()
    shutil.copy(publish_data / "wikigen" / "entries.parquet", data / "wikigen")
    shutil.copy(publish_data / "chunk" / "chunks.parquet", data / "chunk")
    row = pq.read_table(publish_data / "wikigen_baselines" / "retrieval.parquet").slice(0, 1)
    broken = row.set_column(
        row.column_names.index("chunk_ids"), "chunk_ids", pa.array([["no-such-chunk"]])
    )
    with pytest.raises(PublishError, match=r"'no-such-chunk'.*chunks\.parquet"):
        wikigen_rr_contexts(broken, data)
    assert wikigen_rr_contexts(row.slice(0, 0), data).num_rows == 0
