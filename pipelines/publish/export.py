"""Stage outputs -> Hub-layout Parquet shards ``<config>/<split>-0000i-of-0000N.parquet``.

Tables are streamed batch by batch: rows are filtered, joined, assigned to splits and redacted,
then written under an explicit ``datasets`` feature schema (kept in the Parquet metadata, so
nested fields and fixed-length vectors load with the declared types), in row groups of at most
``ROW_GROUP_BYTES`` of Arrow data.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds
import pyarrow.parquet as pq
from datasets import Features
from datasets.table import table_cast

from pipelines.errors import BenchsmithError, MissingInputError
from pipelines.publish.dating import Dating
from pipelines.publish.registry import ConfigSpec, DatasetSpec
from pipelines.publish.views import VIEWS, View

BATCH_ROWS = 1024
ROW_GROUP_BYTES = 64 * 1024 * 1024
"""Cap on a Parquet row group's Arrow data: the Hub's viewer reads whole row groups."""
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
    """Size of the shards on disk (the card's ``download_size`` adds these up)."""
    num_bytes: int = 0
    """Arrow size as ``datasets`` records it (the card's ``num_bytes``; :func:`arrow_nbytes`)."""
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
    group: str | None = None
    """The ``group_by`` value the config holds (an LV-Eval variant), if grouped."""
    items: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Item id (``spec.ids``) -> its split and the digest of its published row."""

    @property
    def rows(self) -> int:
        """Rows over every split."""
        return sum(s.rows for s in self.splits.values())


def config_sources(spec: ConfigSpec, data: Path) -> list[tuple[str, Path, object]]:
    """``(config name, source file, group value)`` for every config ``spec`` expands to."""
    if "*" in spec.source:
        files = sorted(data.glob(spec.source))
    elif (data / spec.source).is_file():
        files = [data / spec.source]
    elif spec.optional:
        return []
    else:
        path = data / spec.source
        raise MissingInputError(f"missing {path} (needed by config {spec.name!r})", path)
    return [(name, f, value) for f in files for name, value in _configs_of(spec, f)]


def _configs_of(spec: ConfigSpec, path: Path) -> list[tuple[str, object]]:
    """``(config name, group value)`` of one source file: one config, or one per distinct value
    of ``spec.group_by`` (listed in ``group_order`` first, then sorted)."""
    if spec.group_by is None:
        return [(spec.name.format(stem=path.stem), None)]
    values = pq.read_table(path, columns=[spec.group_by]).column(spec.group_by).unique()
    order = {v: i for i, v in enumerate(spec.group_order)}
    ordered = sorted(values.to_pylist(), key=lambda v: (order.get(v, len(order)), str(v)))
    return [(spec.name.format(stem=path.stem, value=config_slug(v)), v) for v in ordered]


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
    group_bytes: int = ROW_GROUP_BYTES,
    dating: Dating | None = None,
) -> ExportedConfig:
    """Write one config's shards under ``out/<name>/`` and return what was written; with
    ``dating``, every row gains its event's dates and first release."""
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    joined = _join_table(spec, data)
    rows = _Rows(spec, group_value, splits_of, joined, url_only, dating, data)
    batches = _transformed(rows, source)
    first = next(batches, None)
    if first is None:  # no rows: an empty shard still declares the schema
        empty = rows.transform(_read_schema(source).empty_table())
        first = pa.RecordBatch.from_pylist([], schema=empty.schema)
    features = Features.from_arrow_schema(
        first.schema.remove(first.schema.get_field_index("_split"))
    )
    schema = features.arrow_schema
    writers: dict[str, _ShardWriter] = {}
    lengths: list[int] = []
    items: dict[str, tuple[str, str]] = {}
    for batch in chain([first], batches):
        split_column = batch.column("_split")
        table = pa.Table.from_batches([batch]).drop_columns(["_split"])
        if spec.text_column:
            lengths.extend(word_lengths(table, spec.text_column))
        if spec.ids:
            items.update(item_digests(table, spec.ids, split_column.to_pylist()))
        for split in pc.unique(split_column).to_pylist() or [spec.split]:
            rows = table.filter(pc.equal(split_column, split)) if len(split_column) else table
            if split not in writers:
                if not SPLIT_NAME.match(split):
                    raise PublishError(
                        f"{source}: split name {split!r} of config {name!r} is not a valid "
                        "split name (letters, digits, underscores)"
                    )
                writers[split] = _ShardWriter(folder, split, schema, shard_bytes, group_bytes)
            writers[split].write(_cast(rows, schema, source, name))
    splits = {split: writer.close() for split, writer in sorted(writers.items())}
    group = None if group_value is None else str(group_value)
    return ExportedConfig(name, spec, source, features, splits, lengths, group, items)


def item_digests(
    table: pa.Table, ids: tuple[str, ...], splits: list[str]
) -> dict[str, tuple[str, str]]:
    """Item id (the ``ids`` columns joined by ``/``) -> its split and a digest of its row."""
    out = {}
    for row, split in zip(table.to_pylist(), splits, strict=True):
        key = "/".join(str(row[c]) for c in ids)
        text = json.dumps(row, sort_keys=True, default=str, ensure_ascii=False)
        out[key] = (split, hashlib.sha256(text.encode()).hexdigest()[:16])
    return out


def _read_schema(path: Path) -> pa.Schema:
    return pq.read_schema(path).remove_metadata()


def _join_table(spec: ConfigSpec, data: Path) -> pa.Table | None:
    if spec.join is None:
        return None
    path = data / spec.join.source
    if not path.is_file():
        raise MissingInputError(f"missing {path} (joined into config {spec.name!r})", path)
    return pq.read_table(path, columns=[spec.join.key, *spec.join.columns])


def _transformed(rows: _Rows, source: Path) -> Iterator[pa.RecordBatch]:
    try:
        reader = pq.ParquetFile(source)
    except (OSError, pa.ArrowInvalid) as exc:
        raise PublishError(f"{source}: not a readable Parquet file: {exc}") from exc
    for batch in reader.iter_batches(batch_size=BATCH_ROWS):
        table = rows.transform(pa.Table.from_batches([batch]))
        if table.num_rows:
            yield from table.combine_chunks().to_batches()


@dataclass
class _Rows:
    """What turns one config's source batches into published rows."""

    spec: ConfigSpec
    group_value: object
    splits_of: dict[str, str]
    joined: pa.Table | None
    url_only: bool
    dating: Dating | None
    data: Path

    def transform(self, table: pa.Table) -> pa.Table:
        """One batch, through :func:`_transform`."""
        return _transform(self, table)


def _transform(rows: _Rows, table: pa.Table) -> pa.Table:
    """View, join, filter, date, assign splits (column ``_split``), drop, redact and rename
    columns of one batch."""
    spec, joined = rows.spec, rows.joined
    table = table.replace_schema_metadata(None)
    if spec.view is not None:
        table = _view(spec)(table)
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
        table = table.filter(pc.equal(_column(table, spec.group_by, spec), rows.group_value))
    if rows.dating is not None:
        table = rows.dating.add_columns(table, spec, rows.data)
    table = table.append_column("_split", _splits(table, spec, rows.splits_of))
    for column in spec.drop:
        table = table.drop_columns([column]) if column in table.column_names else table
    if rows.url_only:
        for path in spec.url_only_drop:
            table = drop_path(table, path)
    for column in spec.vectors:
        table = _fixed_vectors(table, column, spec)
    return _first_values(_renamed(table, spec), spec)


def _view(spec: ConfigSpec) -> View:
    if spec.view not in VIEWS:
        raise PublishError(
            f"config {spec.name!r}: unknown view {spec.view!r} (known: {', '.join(sorted(VIEWS))})"
        )
    return VIEWS[spec.view]


def _renamed(table: pa.Table, spec: ConfigSpec) -> pa.Table:
    """The columns renamed as ``spec.rename`` says (source name -> published name)."""
    names = dict(spec.rename)
    for column in names:
        _column(table, column, spec)
    return table.rename_columns([names.get(n, n) for n in table.column_names])


def _first_values(table: pa.Table, spec: ConfigSpec) -> pa.Table:
    """A scalar column of the first value of each list (null when empty), right after it."""
    for column, source in spec.first_of:
        values = _column(table, source, spec).combine_chunks()
        if not pa.types.is_list(values.type) and not pa.types.is_large_list(values.type):
            raise PublishError(f"config {spec.name!r}: {source!r} is {values.type}, not a list")
        first = pa.array([v[0] if v else None for v in values.to_pylist()], values.type.value_type)
        at = table.column_names.index(source) + 1
        table = table.add_column(at, pa.field(column, values.type.value_type), first)
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

    As its Parquet builder does: each file read in batches of its first row group's rows, each
    batch cast to the features' schema with ``datasets``' own cast; the batches' sizes add up.
    """
    fmt = pds.ParquetFileFormat()
    total = 0
    for path in paths:
        with path.open("rb") as handle:
            fragment = fmt.make_fragment(handle)
            if not fragment.row_groups:
                continue
            size = fragment.row_groups[0].num_rows
            for batch in fragment.to_batches(batch_size=size, batch_readahead=0):
                total += table_cast(pa.Table.from_batches([batch]), schema).nbytes
    return total


class _ShardWriter:
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
