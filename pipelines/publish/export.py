"""Stage outputs -> Hub-layout Parquet shards ``<config>/<split>-0000i-of-0000N.parquet``.

Tables are streamed batch by batch, each batch at most about ``BATCH_BYTES`` of uncompressed
data (:func:`batch_rows`), so memory does not grow with a file's size nor with its rows': rows
are filtered, joined, assigned to splits and redacted (:mod:`pipelines.publish.rows`), then
written under an explicit ``datasets`` feature schema (kept in the Parquet metadata, so nested
fields and fixed-length vectors load with the declared types), in row groups of at most
``ROW_GROUP_BYTES`` of Arrow data (:mod:`pipelines.publish.shards`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchsmith_scoring.tokens import Tokenizer
from pipelines.errors import MissingInputError, PublishError
from pipelines.publish.dating import Dating
from pipelines.publish.labels import ConfigLabels
from pipelines.publish.registry import ConfigSpec, DatasetSpec
from pipelines.publish.reviews import ConfigReview
from pipelines.publish.rows import Rows
from pipelines.publish.shards import ROW_GROUP_BYTES, ShardWriter, SplitFiles
from pipelines.publish.token_counts import COLUMN

if TYPE_CHECKING:
    from datasets import Features

BATCH_ROWS = 1024
"""Most rows in one batch read from a source file."""
BATCH_BYTES = 16 * 1024 * 1024
"""Most uncompressed bytes in one batch read from a source file, by its Parquet metadata: ten of
LV-Eval's 256k-word records (1.5 MB each) rather than a whole level (780 MB at 130 events)."""
PYTHON_BYTES = 4 * 1024 * 1024
"""Most Arrow bytes of rows turned into Python objects at once (digests, word counts)."""
SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")


@dataclass
class ExportedConfig:
    """One exported config: its features, splits, the word lengths of its text column and its
    rows' token counts."""

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
    token_lengths: dict[str, list[int]] = field(default_factory=dict)
    """Tokenizer name -> the ``tokens`` counts of every row that has one (none without the
    column)."""

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
    batch_bytes: int = BATCH_BYTES,
    dating: Dating | None = None,
    tokenizers: Sequence[Tokenizer] = (),
    review: ConfigReview | None = None,
    labels: ConfigLabels | None = None,
) -> ExportedConfig:
    """Write one config's shards under ``out/<name>/`` and return what was written; with
    ``dating``, every row gains its event's dates and first release; with ``tokenizers``, a
    config that declares a ``tokens`` column gains it; with ``review``, rejected items are left
    out and corrections applied; with ``labels``, the panel's labels added and its dropped items
    left out. ``source`` is read in batches of about ``batch_bytes`` of
    uncompressed data (:func:`batch_rows`)."""
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    joined = _join_table(spec, data)
    rows = Rows(
        spec, group_value, splits_of, joined, url_only, dating, data, tokenizers, review, labels
    )
    batches = _transformed(rows, source, batch_bytes)
    first = next(batches, None)
    if first is None:  # no rows: an empty shard still declares the schema
        empty = rows.transform(_read_schema(source).empty_table())
        first = pa.RecordBatch.from_pylist([], schema=empty.schema)
    from datasets import Features  # datasets' import takes about 0.4 s: at export time only

    features = Features.from_arrow_schema(
        first.schema.remove(first.schema.get_field_index("_split"))
    )
    schema = features.arrow_schema
    writers: dict[str, ShardWriter] = {}
    lengths: list[int] = []
    items: dict[str, tuple[str, str]] = {}
    tokens: dict[str, list[int]] = {}
    batches = chain([first], batches)
    del first  # written, then freed, as any other batch
    for batch in batches:
        split_column = batch.column("_split")
        table = pa.Table.from_batches([batch]).drop_columns(["_split"])
        if spec.text_column:
            lengths.extend(word_lengths(table, spec.text_column))
        if COLUMN in table.column_names:
            add_token_lengths(tokens, table.column(COLUMN))
        if spec.ids:
            # an item's digest is its content's: counts follow from it and publish.tokenizers
            content = table.drop_columns([COLUMN]) if COLUMN in table.column_names else table
            items.update(item_digests(content, spec.ids, split_column.to_pylist()))
        for split in pc.unique(split_column).to_pylist() or [spec.split]:
            rows = table.filter(pc.equal(split_column, split)) if len(split_column) else table
            if split not in writers:
                if not SPLIT_NAME.match(split):
                    raise PublishError(
                        f"{source}: split name {split!r} of config {name!r} is not a valid "
                        "split name (letters, digits, underscores)"
                    )
                writers[split] = ShardWriter(folder, split, schema, shard_bytes, group_bytes)
            writers[split].write(_cast(rows, schema, source, name))
    splits = {split: writer.close() for split, writer in sorted(writers.items())}
    group = None if group_value is None else str(group_value)
    return ExportedConfig(name, spec, source, features, splits, lengths, group, items, tokens)


def add_token_lengths(lengths: dict[str, list[int]], column: pa.ChunkedArray) -> None:
    """Add the non-null counts of a ``tokens`` column to ``lengths`` (tokenizer -> counts)."""
    array = column.combine_chunks()
    for child in array.type:
        values = array.field(child.name).drop_null().to_pylist()
        lengths.setdefault(child.name, []).extend(values)


def item_digests(
    table: pa.Table, ids: tuple[str, ...], splits: list[str]
) -> dict[str, tuple[str, str]]:
    """Item id (the ``ids`` columns joined by ``/``) -> its split and a digest of its row."""
    out = {}
    rows = chain.from_iterable(part.to_pylist() for part in row_slices(table))
    for row, split in zip(rows, splits, strict=True):
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


def batch_rows(metadata: pq.FileMetaData, max_bytes: int = BATCH_BYTES) -> int:
    """Rows per batch so that a batch holds at most about ``max_bytes`` of uncompressed data:
    by the widest row group's uncompressed bytes per row (Parquet metadata), at least one row
    and at most ``BATCH_ROWS``."""
    widest = max(
        (
            group.total_byte_size / group.num_rows
            for group in map(metadata.row_group, range(metadata.num_row_groups))
            if group.num_rows
        ),
        default=0.0,
    )
    if widest <= 0:
        return BATCH_ROWS
    return max(1, min(BATCH_ROWS, int(max_bytes // widest)))


def _transformed(rows: Rows, source: Path, batch_bytes: int) -> Iterator[pa.RecordBatch]:
    try:
        # pre_buffer would read ahead the column chunks of many row groups at once
        reader = pq.ParquetFile(source, pre_buffer=False)
    except (OSError, pa.ArrowInvalid) as exc:
        raise PublishError(f"{source}: not a readable Parquet file: {exc}") from exc
    size = batch_rows(reader.metadata, batch_bytes)
    for batch in reader.iter_batches(batch_size=size):
        table = rows.transform(pa.Table.from_batches([batch]))
        del batch  # not kept while the rows are written and the next batch is read
        if table.num_rows:
            yield from table.combine_chunks().to_batches()


def _cast(table: pa.Table, schema: pa.Schema, source: Path, name: str) -> pa.Table:
    try:
        return table.select(schema.names).cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, KeyError) as exc:
        raise PublishError(
            f"{source}: rows of config {name!r} do not fit the schema of its first rows: {exc}"
        ) from exc


def word_lengths(table: pa.Table, path: str) -> list[int]:
    """Word counts of a text column, of a text field in a list of structs (``"a.b"``), or the
    values of a word-count column; none when the column or field is not there."""
    column, _, child = path.partition(".")
    if column not in table.column_names:
        return []
    lengths = []
    for part in row_slices(table.select([column])):
        array = part.column(column).combine_chunks()
        if child:
            flat = pc.list_flatten(array)
            if flat.type.get_field_index(child) < 0:
                return []  # dropped (a URL-only export's texts)
            array = flat.field(child)
        if pa.types.is_integer(array.type):  # a word count column already
            lengths += [n for n in array.to_pylist() if n]
        else:
            lengths += [n for text in array.to_pylist() if text and (n := len(text.split()))]
    return lengths


def row_slices(table: pa.Table, max_bytes: int = PYTHON_BYTES) -> Iterator[pa.Table]:
    """``table`` in slices of about ``max_bytes`` of Arrow data (at least one row each), so that
    the Python objects made of one slice stay small."""
    step = max_bytes * table.num_rows // table.nbytes if table.nbytes else table.num_rows
    step = max(1, step)
    for start in range(0, table.num_rows, step):
        yield table.slice(start, step)
