"""The export's memory is bounded by bytes, not rows: a config of large records (LV-Eval's
256k-word contexts are 1.5 MB each) is read, digested and written a few records at a time, and
the split sizes read back one column at a time stay what ``datasets`` computes."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.publish.export import BATCH_ROWS, batch_rows, export_config
from pipelines.publish.registry import ConfigSpec
from pipelines.publish.shards import arrow_nbytes

MB = 1024 * 1024


def large_records(path: Path, rows: int, size: int) -> list[str]:
    """A Parquet file of ``rows`` records whose ``context`` is about ``size`` bytes of 100-byte
    words, in row groups of two records (its writer bounded them, as the lveval stage does: a
    reader decompresses a row group's page whole); returns the contexts."""
    word = "w" * 99
    contexts = [f"{i:04d}" + (" " + word) * (size // 100) for i in range(rows)]
    ids = [f"qa-{i}" for i in range(rows)]
    pq.write_table(pa.table({"qa_id": ids, "context": contexts}), path, row_group_size=2)
    return contexts


POOLS: list[pa.MemoryPool] = []
"""Every counting pool made, kept alive: a buffer it allocated may be freed after the test."""


@contextmanager
def arrow_pool() -> Iterator[pa.MemoryPool]:
    """A pool that counts what Arrow allocates while it is the default one."""
    previous = pa.default_memory_pool()
    pool = pa.proxy_memory_pool(previous)
    POOLS.append(pool)
    pa.set_memory_pool(pool)
    try:
        yield pool
    finally:
        pa.set_memory_pool(previous)


def test_batch_rows_follow_the_bytes_per_row_in_the_parquet_metadata(tmp_path):
    large_records(tmp_path / "large.parquet", 8, 1_000_000)
    pq.write_table(pa.table({"n": list(range(5000))}), tmp_path / "small.parquet")
    pq.write_table(pa.table({"n": pa.array([], pa.int64())}), tmp_path / "empty.parquet")
    large = pq.read_metadata(tmp_path / "large.parquet")
    assert batch_rows(large, 2_500_000) == 2  # about 1 MB a row, uncompressed
    assert batch_rows(large, 10_500_000) == 10
    assert batch_rows(large, 1) == 1  # at least one row
    assert batch_rows(pq.read_metadata(tmp_path / "small.parquet"), MB) == BATCH_ROWS
    assert batch_rows(pq.read_metadata(tmp_path / "empty.parquet"), MB) == BATCH_ROWS


def test_a_config_of_large_records_is_exported_a_few_records_at_a_time(tmp_path):
    rows, size = 64, MB // 4
    contexts = large_records(tmp_path / "records.parquet", rows, size)
    spec = ConfigSpec("records", "records.parquet", "", text_column="context", ids=("qa_id",))
    import datasets  # noqa: F401  (its import, the export's first, is not the export's memory)

    tracemalloc.start()
    try:
        with arrow_pool() as pool:
            exported = export_config(
                "records",
                spec,
                tmp_path / "records.parquet",
                None,
                {},
                tmp_path,
                tmp_path / "out",
                url_only=False,
                shard_bytes=10**9,
                group_bytes=MB,
                batch_bytes=MB // 2,
            )
        python_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert exported.rows == rows and len(exported.items) == rows
    assert exported.word_lengths == [len(c.split()) for c in contexts]
    (shard,) = exported.splits["test"].files
    written = pq.read_table(tmp_path / "out" / shard)
    assert written.column("context").to_pylist() == contexts
    # 16 MB of records: Arrow holds a few batches and a row group, Python a few records
    assert pool.max_memory() < rows * size / 2, pool.max_memory()
    assert python_peak < rows * size / 2, python_peak


@pytest.mark.parametrize(
    "schema",
    [
        pa.schema([("n", pa.int32()), ("text", pa.string())]),  # the file's own
        pa.schema([("n", pa.int64()), ("text", pa.large_string())]),  # cast by datasets
    ],
)
def test_split_sizes_read_column_by_column_are_what_datasets_computes(tmp_path, schema):
    from datasets import Dataset, Features

    path = tmp_path / "split.parquet"
    table = pa.table({"n": pa.array(range(7), pa.int32()), "text": ["a b", None, "c"] * 2 + ["d"]})
    with pq.ParquetWriter(path, table.schema) as writer:
        for start, length in ((0, 3), (3, 4)):  # row groups of 3 and 4 rows: batches of 3
            writer.write_table(table.slice(start, length))
    features = Features.from_arrow_schema(schema)
    loaded = Dataset.from_parquet(str(path), features=features, cache_dir=str(tmp_path / "cache"))
    assert arrow_nbytes([path], schema) == loaded.info.splits["train"].num_bytes > 0
