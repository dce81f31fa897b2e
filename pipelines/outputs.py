"""Atomic stage outputs: everything is written under a temporary folder, then renamed into place."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.secrets import redact, redact_value

REDACTED_COLUMNS = ("reason", "detail")
"""Columns that say why an item failed or was left out, in words that may quote an error:
every :class:`TableWriter` redacts them (:func:`pipelines.secrets.redact`)."""


def open_scratch(out_dir: Path) -> Path:
    """A fresh scratch folder beside ``out_dir``'s files, after removing any a killed run left."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob(".tmp-*"):  # left by a run that was killed
        shutil.rmtree(stale, ignore_errors=True)
    scratch = out_dir / f".tmp-{os.getpid()}"
    scratch.mkdir()
    return scratch


def commit_scratch(scratch: Path, out_dir: Path) -> None:
    """Rename every file and folder of ``scratch`` into ``out_dir`` (``stats.json`` last, so a
    metrics file never describes missing tables), then remove ``scratch``."""
    for path in sorted(scratch.iterdir(), key=lambda p: p.name == "stats.json"):
        target = out_dir / path.name
        if path.is_dir() and target.is_dir():
            # a folder cannot replace a non-empty one: move the old one aside first
            old = scratch / f".old-{path.name}"
            os.replace(target, old)
        os.replace(path, target)
    shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def staged_outputs(out_dir: Path) -> Iterator[Path]:
    """Yield a scratch folder beside ``out_dir``; on success move its files into ``out_dir``.

    A stage killed or failing midway leaves ``out_dir`` as it was: the scratch folder is removed
    on error (or, after a kill, by the next run) and its files are only renamed (atomically, file
    by file) once the stage finished.
    """
    scratch = open_scratch(out_dir)
    try:
        yield scratch
        commit_scratch(scratch, out_dir)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class TableWriter:
    """Stream row dicts into one Parquet file in batches, with an explicit schema; the
    :data:`REDACTED_COLUMNS` it has are redacted."""

    def __init__(self, path: Path, schema: pa.Schema, batch_rows: int = 256):
        self.path = path
        self.schema = schema
        self.batch_rows = batch_rows
        self.rows = 0
        self._buffer: list[dict[str, Any]] = []
        self._redacted = [name for name in REDACTED_COLUMNS if name in schema.names]
        self._writer = pq.ParquetWriter(path, schema, compression="zstd")

    def write(self, row: dict[str, Any]) -> None:
        """Buffer one row; flush a row group when the batch is full."""
        for name in self._redacted:
            value = row.get(name)
            if isinstance(value, str) and value and (clean := redact(value)) != value:
                row = {**row, name: clean}
        self._buffer.append(row)
        if len(self._buffer) >= self.batch_rows:
            self._flush()

    def write_table(self, table: pa.Table) -> None:
        """Write a whole table (after any buffered rows), e.g. columns built from arrays."""
        self._flush()
        for name in self._redacted:
            if name in table.column_names:
                column = [redact(v) if v else v for v in table.column(name).to_pylist()]
                at = table.column_names.index(name)
                table = table.set_column(at, name, pa.array(column, pa.string()))
        self._writer.write_table(table.cast(self.schema))
        self.rows += table.num_rows

    def _flush(self) -> None:
        if self._buffer:
            self._writer.write_table(pa.Table.from_pylist(self._buffer, schema=self.schema))
            self.rows += len(self._buffer)
            self._buffer = []

    def close(self) -> None:
        """Flush what is buffered and finish the file (an empty table still gets its schema)."""
        self._flush()
        self._writer.close()

    def __enter__(self) -> TableWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as stable, indented JSON, its strings redacted (``stats.json``, metrics
    and reports may quote an error)."""
    text = json.dumps(redact_value(data), indent=2, sort_keys=True, default=str)
    path.write_text(text + "\n", "utf-8")


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` (redacted, as :func:`write_json`) as indented JSON through a temporary
    file beside ``path`` and a rename, so ``path`` is never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        text = json.dumps(redact_value(data), indent=2, ensure_ascii=False)
        scratch.write_text(text + "\n", "utf-8")
        os.replace(scratch, path)
    finally:
        scratch.unlink(missing_ok=True)


class ShardedTableWriter:
    """Stream rows into numbered Parquet files of at most ``rows_per_shard`` rows each."""

    def __init__(
        self, folder: Path, schema: pa.Schema, rows_per_shard: int, pattern: str = "part-{:05d}"
    ):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.schema = schema
        self.rows_per_shard = rows_per_shard
        self.pattern = pattern
        self.paths: list[Path] = []
        self.rows = 0
        self._in_shard = 0
        self._current: TableWriter | None = None

    def write(self, row: dict[str, Any]) -> None:
        """Add a row, starting a new shard when the current one is full."""
        if self._current is None or self._in_shard >= self.rows_per_shard:
            self._rotate()
        assert self._current is not None
        self._current.write(row)
        self._in_shard += 1
        self.rows += 1

    def _rotate(self) -> None:
        if self._current is not None:
            self._current.close()
        path = self.folder / f"{self.pattern.format(len(self.paths))}.parquet"
        self.paths.append(path)
        self._in_shard = 0
        self._current = TableWriter(path, self.schema, batch_rows=min(1024, self.rows_per_shard))

    def close(self) -> None:
        """Finish the last shard."""
        if self._current is not None:
            self._current.close()
            self._current = None

    def __enter__(self) -> ShardedTableWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
