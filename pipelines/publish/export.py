"""Stage outputs -> Hub-layout Parquet shards ``<config>/<split>-0000i-of-0000N.parquet``.

Tables are streamed batch by batch: rows are filtered, joined, assigned to splits and redacted,
then written under an explicit ``datasets`` feature schema (kept in the Parquet metadata, so
nested fields and fixed-length vectors load with the declared types).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from datasets import Features

from pipelines.errors import BenchsmithError, MissingInputError
from pipelines.publish.registry import ConfigSpec, DatasetSpec

BATCH_ROWS = 1024
UNASSIGNED = "unassigned"
"""Split of rows whose entry is not in the split index (kept, and counted in the card)."""
SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")


class PublishError(BenchsmithError):
    """A table cannot be exported, a card cannot be rendered, or a push is refused."""


@dataclass
class SplitFiles:
    """The shards of one split and what they hold."""

    rows: int = 0
    bytes: int = 0
    files: list[str] = field(default_factory=list)


@dataclass
class ExportedConfig:
    """One exported config: its features, splits and the word lengths of its text column."""

    name: str
    spec: ConfigSpec
    source: Path
    features: Features
    splits: dict[str, SplitFiles]
    word_lengths: list[int] = field(default_factory=list)

    @property
    def rows(self) -> int:
        """Rows over every split."""
        return sum(s.rows for s in self.splits.values())


def config_sources(spec: ConfigSpec, data: Path) -> list[tuple[str, Path, str | None]]:
    """``(config name, source file, group value)`` for every config ``spec`` expands to."""
    if "*" in spec.source:
        files = sorted(data.glob(spec.source))
        return [(spec.name.format(stem=f.stem), f, None) for f in files]
    path = data / spec.source
    if not path.is_file():
        if spec.optional:
            return []
        raise MissingInputError(f"missing {path} (needed by config {spec.name!r})", path)
    if spec.group_by is None:
        return [(spec.name, path, None)]
    values = pq.read_table(path, columns=[spec.group_by]).column(spec.group_by).unique()
    return [(spec.name.format(value=config_slug(v)), path, v) for v in sorted(values.to_pylist())]


def config_slug(value: object) -> str:
    """A config-name-safe form of a column value (``sentence-transformers/x`` -> ``x``)."""
    text = str(value).rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_").lower() or "none"


def split_index(spec: DatasetSpec, data: Path) -> dict[str, str]:
    """Entry id -> split, from the dataset's split index (empty when it has none)."""
    if spec.split_index is None:
        return {}
    source, key, column = spec.split_index
    path = data / source
    if not path.is_file():
        raise MissingInputError(f"missing {path} (the split index of {spec.name})", path)
    table = pq.read_table(path, columns=[key, column])
    return dict(zip(table.column(key).to_pylist(), table.column(column).to_pylist(), strict=True))


def export_config(
    name: str,
    spec: ConfigSpec,
    source: Path,
    group_value: object,
    splits_of: dict[str, str],
    data: Path,
    out: Path,
    *,
    url_only: bool,
    shard_bytes: int,
) -> ExportedConfig:
    """Write one config's shards under ``out/<name>/`` and return what was written."""
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    joined = _join_table(spec, data)
    batches = _transformed(spec, source, group_value, splits_of, joined, url_only)
    first = next(batches, None)
    if first is None:  # no rows: an empty shard still declares the schema
        empty = _transform(
            spec, _read_schema(source).empty_table(), group_value, splits_of, joined, url_only
        )
        first = pa.RecordBatch.from_pylist([], schema=empty.schema)
    features = Features.from_arrow_schema(
        first.schema.remove(first.schema.get_field_index("_split"))
    )
    schema = features.arrow_schema
    writers: dict[str, _ShardWriter] = {}
    lengths: list[int] = []
    for batch in chain([first], batches):
        split_column = batch.column("_split")
        table = pa.Table.from_batches([batch]).drop_columns(["_split"])
        if spec.text_column:
            lengths.extend(word_lengths(table, spec.text_column))
        for split in pc.unique(split_column).to_pylist() or [spec.split]:
            rows = table.filter(pc.equal(split_column, split)) if len(split_column) else table
            if split not in writers:
                if not SPLIT_NAME.match(split):
                    raise PublishError(
                        f"{source}: split name {split!r} of config {name!r} is not a valid "
                        "split name (letters, digits, underscores)"
                    )
                writers[split] = _ShardWriter(folder, split, schema, shard_bytes)
            writers[split].write(_cast(rows, schema, source, name))
    splits = {split: writer.close() for split, writer in sorted(writers.items())}
    return ExportedConfig(name, spec, source, features, splits, lengths)


def _read_schema(path: Path) -> pa.Schema:
    return pq.read_schema(path).remove_metadata()


def _join_table(spec: ConfigSpec, data: Path) -> pa.Table | None:
    if spec.join is None:
        return None
    path = data / spec.join.source
    if not path.is_file():
        raise MissingInputError(f"missing {path} (joined into config {spec.name!r})", path)
    return pq.read_table(path, columns=[spec.join.key, *spec.join.columns])


def _transformed(
    spec: ConfigSpec,
    source: Path,
    group_value: object,
    splits_of: dict[str, str],
    joined: pa.Table | None,
    url_only: bool,
) -> Iterator[pa.RecordBatch]:
    try:
        reader = pq.ParquetFile(source)
    except (OSError, pa.ArrowInvalid) as exc:
        raise PublishError(f"{source}: not a readable Parquet file: {exc}") from exc
    for batch in reader.iter_batches(batch_size=BATCH_ROWS):
        table = _transform(
            spec, pa.Table.from_batches([batch]), group_value, splits_of, joined, url_only
        )
        if table.num_rows:
            yield from table.combine_chunks().to_batches()


def _transform(
    spec: ConfigSpec,
    table: pa.Table,
    group_value: object,
    splits_of: dict[str, str],
    joined: pa.Table | None,
    url_only: bool,
) -> pa.Table:
    """Join, filter, assign splits (column ``_split``), drop and redact columns of one batch."""
    table = table.replace_schema_metadata(None)
    if joined is not None and spec.join is not None:
        # a lookup, not Table.join: order is kept and list columns are allowed
        at = pc.index_in(
            _column(table, spec.join.key, spec), value_set=joined.column(spec.join.key)
        )
        for column in spec.join.columns:
            table = table.append_column(column, joined.column(column).take(at))
    for column, value in spec.where:
        table = table.filter(pc.equal(_column(table, column, spec), value))
    if spec.group_by is not None:
        table = table.filter(pc.equal(_column(table, spec.group_by, spec), group_value))
    table = table.append_column("_split", _splits(table, spec, splits_of))
    for column in spec.drop:
        table = table.drop_columns([column]) if column in table.column_names else table
    if url_only:
        for path in spec.url_only_drop:
            table = drop_path(table, path)
    for column in spec.vectors:
        table = _fixed_vectors(table, column, spec)
    return table


def _column(table: pa.Table, column: str, spec: ConfigSpec) -> pa.ChunkedArray:
    if column not in table.column_names:
        raise PublishError(
            f"config {spec.name!r} (from {spec.source}) needs column {column!r}; the table has "
            f"{', '.join(table.column_names)}"
        )
    return table.column(column)


def _splits(table: pa.Table, spec: ConfigSpec, splits_of: dict[str, str]) -> pa.Array:
    if spec.split_column:
        return pc.cast(_column(table, spec.split_column, spec), pa.string()).combine_chunks()
    if spec.split_key:
        keys = _column(table, spec.split_key, spec).to_pylist()
        return pa.array([splits_of.get(k, UNASSIGNED) for k in keys], pa.string())
    return pa.array([spec.split] * table.num_rows, pa.string())


def drop_path(table: pa.Table, path: str) -> pa.Table:
    """Drop column ``a`` or the field ``b`` of the structs in list column ``a`` (``"a.b"``)."""
    column, _, child = path.partition(".")
    if column not in table.column_names:
        return table
    if not child:
        return table.drop_columns([column])
    index = table.column_names.index(column)
    array = table.column(column).combine_chunks()
    if not (pa.types.is_list(array.type) and pa.types.is_struct(array.type.value_type)):
        raise PublishError(f"cannot drop {path!r}: {column} is {array.type}, not a list of structs")
    values = array.values
    kept = [f for f in array.type.value_type if f.name != child]
    structs = pa.StructArray.from_arrays(
        [values.field(f.name) for f in kept], fields=kept, mask=values.is_null()
    )
    rebuilt = pa.ListArray.from_arrays(array.offsets, structs, mask=array.is_null())
    return table.set_column(index, table.field(column).with_type(rebuilt.type), rebuilt)


def _fixed_vectors(table: pa.Table, column: str, spec: ConfigSpec) -> pa.Table:
    array = _column(table, column, spec).combine_chunks()
    if pa.types.is_fixed_size_list(array.type) or not len(array):
        return table
    sizes = pc.unique(pc.list_value_length(array)).to_pylist()
    if len(sizes) != 1 or sizes[0] is None:
        raise PublishError(
            f"config {spec.name!r} ({spec.source}): column {column!r} mixes vector lengths {sizes}"
        )
    fixed = array.cast(pa.list_(array.type.value_type, sizes[0]))
    index = table.column_names.index(column)
    return table.set_column(index, table.field(column).with_type(fixed.type), fixed)


def _cast(table: pa.Table, schema: pa.Schema, source: Path, name: str) -> pa.Table:
    try:
        return table.select(schema.names).cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, KeyError) as exc:
        raise PublishError(
            f"{source}: rows of config {name!r} do not fit the schema of its first rows: {exc}"
        ) from exc


def word_lengths(table: pa.Table, path: str) -> list[int]:
    """Word counts of a text column, of a text field in a list of structs (``"a.b"``), or the
    values of a word-count column."""
    column, _, child = path.partition(".")
    if column not in table.column_names:
        return []
    array = table.column(column).combine_chunks()
    if child:
        array = pc.list_flatten(array).field(child)
    if pa.types.is_integer(array.type):  # a word count column already
        return [n for n in array.to_pylist() if n]
    return [n for text in array.to_pylist() if text and (n := len(text.split()))]


class _ShardWriter:
    """Roll Parquet shards of one split at ``shard_bytes`` of Arrow data; name them at close."""

    def __init__(self, folder: Path, split: str, schema: pa.Schema, shard_bytes: int):
        self.folder = folder
        self.split = split
        self.schema = schema
        self.shard_bytes = shard_bytes
        self.result = SplitFiles()
        self._parts: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._in_shard = 0

    def write(self, table: pa.Table) -> None:
        """Append rows, starting a new shard whenever the current one reaches the cap."""
        row_bytes = max(1, table.nbytes // max(1, table.num_rows))
        while table.num_rows:
            if self._writer is None or self._in_shard >= self.shard_bytes:
                self._rotate()
            assert self._writer is not None
            fit = max(1, (self.shard_bytes - self._in_shard) // row_bytes)
            part, table = table.slice(0, fit), table.slice(fit)
            self._writer.write_table(part)
            self._in_shard += part.num_rows * row_bytes
            self.result.rows += part.num_rows

    def _rotate(self) -> None:
        if self._writer is not None:
            self._writer.close()
        part = self.folder / f".{self.split}-part{len(self._parts)}.parquet"
        self._parts.append(part)
        self._writer = pq.ParquetWriter(part, self.schema, compression="zstd")
        self._in_shard = 0

    def close(self) -> SplitFiles:
        if self._writer is None:
            self._rotate()
        assert self._writer is not None
        self._writer.close()
        total = len(self._parts)
        for i, part in enumerate(self._parts):
            final = self.folder / f"{self.split}-{i:05d}-of-{total:05d}.parquet"
            part.rename(final)
            self.result.files.append(f"{self.folder.name}/{final.name}")
            self.result.bytes += final.stat().st_size
        return self.result
