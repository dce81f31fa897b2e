"""Find placeholders in an export: what a failed ask would leave where a model's answer belongs.

A placeholder is ``None``, NaN, an empty or blank string, or a sentinel word (``None``, ``null``,
``N/A``, ``TODO``, ``placeholder``, ``failed``, ...), at any depth of a row's value (inside lists
and structs). Only the columns a model writes are searched: the source data has empty fields of
its own (a lost link's text, a heading with no prose, an infobox that says "None").
"""

from __future__ import annotations

import glob
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

SENTINELS = frozenset(
    {"none", "null", "nan", "n/a", "na", "todo", "tbd", "placeholder", "failed", "<failed>",
     "[failed]", "error", "unknown", "?", "...", "…", "lorem ipsum"}
)  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """One placeholder: the file, the row, where in the row, and the value."""

    file: str
    row: int
    where: str
    value: Any

    def __str__(self) -> str:
        return f"{self.file} row {self.row}: {self.where} = {self.value!r}"


def placeholders(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Every placeholder inside ``value``, with its path (``insights[].text``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        yield where, value
    elif isinstance(value, str):
        if not value.strip() or value.strip().lower() in SENTINELS:
            yield where, value
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            yield from placeholders(inner, f"{where}.{key}")
    elif isinstance(value, Sequence):
        for inner in value:
            yield from placeholders(inner, f"{where}[]")


def scan(export: Path, columns: Mapping[str, Sequence[str]]) -> tuple[list[Finding], int]:
    """The placeholders in the columns a model writes, per dataset (``columns``), of every
    Parquet file under ``export/<dataset>/``; and how many values were searched."""
    found: list[Finding] = []
    searched = 0
    for dataset, names in columns.items():
        for file in sorted(glob.glob(str(export / dataset / "**" / "*.parquet"), recursive=True)):
            table = pq.read_table(file)
            present = [n for n in names if n in table.column_names]
            for k, row in enumerate(table.select(present).to_pylist()):
                for name in present:
                    searched += 1
                    for where, value in placeholders(row[name], name):
                        found.append(Finding(str(Path(file).relative_to(export)), k, where, value))
    return found, searched
