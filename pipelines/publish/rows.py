"""One config's source batches turned into published rows: view, join, filter, date, assign
splits (column ``_split``), drop, redact, fix vector lengths, rename and count tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from benchsmith_scoring.tokens import Tokenizer
from pipelines.errors import PublishError
from pipelines.publish.dating import Dating
from pipelines.publish.labels import ConfigLabels
from pipelines.publish.registry import REQUEST, ConfigSpec
from pipelines.publish.reviews import ConfigReview
from pipelines.publish.token_counts import COLUMN, token_column
from pipelines.publish.views import DATA_VIEWS, VIEWS, View

UNASSIGNED = "unassigned"
"""Split of rows whose entry is not in the split index (kept, and counted in the card)."""


@dataclass
class Rows:
    """What turns one config's source batches into published rows."""

    spec: ConfigSpec
    group_value: object
    splits_of: dict[str, str]
    joined: pa.Table | None
    url_only: bool
    dating: Dating | None
    data: Path
    tokenizers: Sequence[Tokenizer] = ()
    """Whose counts the ``tokens`` column holds (configs whose spec declares one)."""
    review: ConfigReview | None = None
    """Items people rejected (left out) and fields they corrected (``reviews/``)."""
    labels: ConfigLabels | None = None
    """The reference panel's labels (``validate``): its dropped items left out."""

    def transform(self, table: pa.Table) -> pa.Table:
        """One batch, through :func:`_transform`."""
        return _transform(self, table)


def _transform(rows: Rows, table: pa.Table) -> pa.Table:
    """View, apply the reviews, join, filter, date, label, assign splits (column ``_split``), drop,
    redact and rename columns of one batch, then count its tokens (a task config's request
    before a URL-only export drops texts)."""
    spec, joined = rows.spec, rows.joined
    table = table.replace_schema_metadata(None)
    if spec.view is not None:
        table = _view(spec, rows.data)(table)
    if rows.review is not None:
        table = rows.review.apply(table, spec)
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
    if rows.labels is not None:
        table = rows.labels.apply(table)
    table = table.append_column("_split", _splits(table, spec, rows.splits_of))
    for column in spec.drop:
        table = table.drop_columns([column]) if column in table.column_names else table
    counts = None
    if spec.tokens == REQUEST and rows.tokenizers:
        # a task config's request is counted before a URL-only export drops texts: the request
        # its harness task sends once they are rehydrated (a data config's text that is not
        # published has no count)
        whole = _first_values(_renamed(table, spec), spec)
        counts = token_column(whole, spec, rows.tokenizers)
    if rows.url_only:
        for path in spec.url_only_drop:
            table = drop_path(table, path)
    for column in spec.vectors:
        table = _fixed_vectors(table, column, spec)
    table = _first_values(_renamed(table, spec), spec)
    if spec.tokens and rows.tokenizers and counts is None:
        counts = token_column(table, spec, rows.tokenizers)
    if counts is not None:
        table = table.append_column(COLUMN, counts)
    return table


def _view(spec: ConfigSpec, data: Path) -> View:
    if spec.view in DATA_VIEWS:
        return partial(DATA_VIEWS[spec.view], data=data)
    if spec.view not in VIEWS:
        known = ", ".join(sorted([*VIEWS, *DATA_VIEWS]))
        raise PublishError(f"config {spec.name!r}: unknown view {spec.view!r} (known: {known})")
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
