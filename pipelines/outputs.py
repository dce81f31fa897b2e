"""Atomic stage outputs: everything is written under a scratch folder beside the output, owned by
its run, then renamed into place."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.errors import BenchsmithError
from pipelines.secrets import redact, redact_value

REDACTED_COLUMNS = ("reason", "detail")
"""Columns that say why an item failed or was left out, in words that may quote an error:
every :class:`TableWriter` redacts them (:func:`pipelines.secrets.redact`)."""

SCRATCH_RE = re.compile(r"\.(?P<out>.+)\.tmp-(?P<pid>\d+)-(?P<stamp>\d+)")
"""A scratch folder's name, ``.<output name>.tmp-<pid>-<time in ns>``, beside its output."""
_LEGACY_RE = re.compile(r"\.tmp-(?P<pid>\d+)")  # inside the output: earlier versions
_START_SLACK_S = 2.0  # /proc start times are whole seconds of boot time plus clock ticks


class OutputInUseError(BenchsmithError):
    """Another run, still alive, is writing the same output folder."""


@dataclass(frozen=True)
class Scratch:
    """A scratch folder and the run that owns it."""

    path: Path
    pid: int
    stamp_ns: int

    @property
    def alive(self) -> bool:
        """Whether its owner still runs: the pid exists and started before the folder was made
        (a pid reused by a later process, as in a fresh container, is a dead owner)."""
        if not pid_alive(self.pid):
            return False
        started = process_start(self.pid)
        return started is None or started <= self.stamp_ns / 1e9 + _START_SLACK_S


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_start(pid: int) -> float | None:
    """When process ``pid`` started, in seconds since the epoch, from ``/proc``; None where
    there is no ``/proc`` (or the process is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(
            line for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime")
        )
        return int(boot.split()[1]) + int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def scratches(out_dir: Path) -> list[Scratch]:
    """The scratch folders of ``out_dir`` (beside it), oldest first."""
    found = []
    for path in out_dir.parent.glob(f".{glob.escape(out_dir.name)}.tmp-*"):
        match = SCRATCH_RE.fullmatch(path.name)
        if match and match["out"] == out_dir.name and path.is_dir():
            found.append(Scratch(path, int(match["pid"]), int(match["stamp"])))
    return sorted(found, key=lambda s: (s.stamp_ns, s.pid))


def clear_dead_scratches(folder: Path) -> list[Path]:
    """Remove the scratch folders in ``folder`` whose run is dead (killed), and those a former
    version left inside ``folder``; return what was removed."""
    removed = []
    for path in folder.glob(".*.tmp-*"):
        match = SCRATCH_RE.fullmatch(path.name)
        if match and path.is_dir():
            owner = Scratch(path, int(match["pid"]), int(match["stamp"]))
            if not owner.alive:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    for path in folder.glob(".tmp-*"):
        match = _LEGACY_RE.fullmatch(path.name)
        if match and path.is_dir() and not pid_alive(int(match["pid"])):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _in_use(out_dir: Path, owner: Scratch) -> OutputInUseError:
    return OutputInUseError(
        f"{out_dir} is in use by pid {owner.pid}, which is writing it under {owner.path.name}; "
        "wait for that run to end (or stop it), or pass another --out"
    )


def open_scratch(out_dir: Path) -> Path:
    """A fresh scratch folder for ``out_dir``, beside it (never inside an output, and on the same
    file system, so the final renames are atomic), owned by this process.

    Scratch folders of dead runs beside ``out_dir`` (and any a former version left inside it) are
    removed first. Raises :class:`OutputInUseError`, naming the pid, when a live run already
    holds one for ``out_dir``; of two runs starting at once, the later folder gives way.
    """
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    clear_dead_scratches(out_dir.parent)
    if out_dir.is_dir():
        clear_dead_scratches(out_dir)
    for other in scratches(out_dir):
        if other.alive:
            raise _in_use(out_dir, other)
    pid, stamp = os.getpid(), time.time_ns()
    scratch = out_dir.parent / f".{out_dir.name}.tmp-{pid}-{stamp}"
    scratch.mkdir()
    earlier = [s for s in scratches(out_dir) if (s.stamp_ns, s.pid) < (stamp, pid) and s.alive]
    if earlier:  # a run that started at the same moment and made its folder first
        shutil.rmtree(scratch, ignore_errors=True)
        raise _in_use(out_dir, earlier[0])
    return scratch


def commit_scratch(scratch: Path, out_dir: Path) -> None:
    """Rename every file and folder of ``scratch`` into ``out_dir`` (``stats.json`` last, so a
    metrics file never describes missing tables), then remove ``scratch``."""
    out_dir.mkdir(parents=True, exist_ok=True)
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
