"""A split written as Parquet shards ``<split>-0000i-of-0000N.parquet`` of bounded size, in
row groups of at most ``ROW_GROUP_BYTES`` of Arrow data, and the sizes the card declares."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_BYTES = 64 * 1024 * 1024
"""Cap on a Parquet row group's Arrow data: the Hub's viewer reads whole row groups."""


@dataclass
class SplitFiles:
    """The shards of one split and what they hold."""

    rows: int = 0
    bytes: int = 0
    """Size of the shards on disk (the card's ``download_size`` adds these up)."""
    num_bytes: int = 0
    """Arrow size as ``datasets`` records it (the card's ``num_bytes``; :func:`arrow_nbytes`)."""
    files: list[str] = field(default_factory=list)


def largest_prefix(table: pa.Table, max_bytes: int) -> int:
    """The most leading rows of ``table`` (at least one) whose Arrow data fit in ``max_bytes``."""
    low, high = 1, table.num_rows
    while low < high:
        middle = (low + high + 1) // 2
        if table.slice(0, middle).nbytes <= max_bytes:
            low = middle
        else:
            high = middle - 1
    return low


def arrow_nbytes(paths: list[Path], schema: pa.Schema) -> int:
    """The Arrow size ``datasets`` records as a split's ``num_bytes`` when it loads ``paths``.

    As its Parquet builder does: each file read as a dataset fragment in batches of its first
    row group's rows (a batch never spans two row groups), each batch cast to the features'
    schema with ``datasets``' own cast (``table_cast``); the batches' sizes add up. A table's
    size is its columns' and that cast goes column by column, so one column of one row group is
    read at a time: memory holds a batch of one column (64 MB of LV-Eval's contexts), not a row
    group of every column read ahead.
    """
    # imported here: datasets (about 0.4 s) and pyarrow.dataset, which loads pandas (0.2 s),
    # would otherwise be paid by every `benchsmith` command through the stage table
    import pyarrow.dataset as pds
    from datasets import Features
    from datasets.table import cast_array_to_feature

    features = Features.from_arrow_schema(schema)
    fmt = pds.ParquetFileFormat(
        default_fragment_scan_options=pds.ParquetFragmentScanOptions(pre_buffer=False)
    )
    total = 0
    for path in paths:
        with path.open("rb") as handle:
            fragment = fmt.make_fragment(handle)
            if not fragment.row_groups:
                continue
            size = fragment.row_groups[0].num_rows
            cast = fragment.physical_schema != schema  # table_cast's test, alike for every column
            for name, group in product(schema.names, range(len(fragment.row_groups))):
                for batch in fragment.subset(row_group_ids=[group]).to_batches(
                    columns=[name], batch_size=size, batch_readahead=0, fragment_readahead=0
                ):
                    column = batch.column(0)
                    total += (
                        cast_array_to_feature(column, features[name]) if cast else column
                    ).nbytes
                    del batch, column  # freed before the next one is read
    return total


class ShardWriter:
    """Write one split as Parquet shards of at most ``shard_bytes`` of Arrow data, in row groups
    of at most ``group_bytes`` (a single larger row is a row group of its own); name the shards
    at close."""

    def __init__(
        self, folder: Path, split: str, schema: pa.Schema, shard_bytes: int, group_bytes: int
    ):
        self.folder = folder
        self.split = split
        self.schema = schema
        self.shard_bytes = shard_bytes
        self.group_bytes = min(group_bytes, shard_bytes)
        self.result = SplitFiles()
        self._parts: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._in_shard = 0
        self._pending: list[pa.Table] = []
        self._pending_bytes = 0

    def write(self, table: pa.Table) -> None:
        """Buffer rows; write every full row group."""
        self._pending.append(table)
        self._pending_bytes += table.nbytes
        if self._pending_bytes >= self.group_bytes:
            self._flush(final=False)

    def _flush(self, *, final: bool) -> None:
        """Write the buffered rows as row groups, keeping back a last partial one unless
        ``final``."""
        rows = pa.concat_tables(self._pending) if self._pending else self.schema.empty_table()
        while rows.num_rows and (final or rows.nbytes >= self.group_bytes):
            fit = largest_prefix(rows, self.group_bytes)
            self._write_group(rows.slice(0, fit))
            rows = rows.slice(fit)
        self._pending = [rows] if rows.num_rows else []
        self._pending_bytes = rows.nbytes if rows.num_rows else 0

    def _write_group(self, group: pa.Table) -> None:
        if self._writer is None or self._in_shard >= self.shard_bytes:
            self._rotate()
        assert self._writer is not None
        self._writer.write_table(group, row_group_size=group.num_rows)
        self._in_shard += group.nbytes
        self.result.rows += group.num_rows

    def _rotate(self) -> None:
        if self._writer is not None:
            self._writer.close()
        part = self.folder / f".{self.split}-part{len(self._parts)}.parquet"
        self._parts.append(part)
        self._writer = pq.ParquetWriter(part, self.schema, compression="zstd")
        self._in_shard = 0

    def close(self) -> SplitFiles:
        """Write the rest, close the last shard and name every shard ``<split>-i-of-N``."""
        self._flush(final=True)
        if self._writer is None:
            self._rotate()
        assert self._writer is not None
        self._writer.close()
        total = len(self._parts)
        paths = []
        for i, part in enumerate(self._parts):
            final = self.folder / f"{self.split}-{i:05d}-of-{total:05d}.parquet"
            part.rename(final)
            paths.append(final)
            self.result.files.append(f"{self.folder.name}/{final.name}")
            self.result.bytes += final.stat().st_size
        self.result.num_bytes = arrow_nbytes(paths, self.schema)
        return self.result
