"""The reference panel's labels in every published row of the items it validated, and the items
``validate.min_solvable`` dropped left out.

A config names how its rows reach their items (:class:`~pipelines.publish.registry.ConfigSpec`
``labelled``): ``qa_id`` (an LV-Eval record or QA item), ``event_id`` (a WikiGenBench entry),
or ``insights`` (a SummHay row: every insight in ``subtopics[].insights`` or ``insights`` gains
its own labels, ``topic_id/insight_id`` in ``labels.parquet``). A row of one item gains
``solvable``, ``closed_book`` and ``difficulty``; a SummHay row's insights each gain them, and a
dropped insight leaves its subtopic (its documents keep their text).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from builders.validation import card_markdown
from pipelines.publish.registry import LABELS, PANEL_REPORT, ConfigSpec
from pipelines.publish.views import bullets

COLUMNS = {"solvable": pa.float64(), "closed_book": pa.float64(), "difficulty": pa.string()}
"""What a validated row (or insight) may gain, in this order: a dataset's rows gain the labels
its panel gave (closed-book answers are LV-Eval's alone), so no row carries an empty label."""
UNLABELLED = "unlabelled"


@dataclass(frozen=True)
class ItemLabel:
    """One item's labels as ``labels.parquet`` holds them."""

    solvable: float | None
    closed_book: float | None
    difficulty: str | None
    dropped: str = ""
    """Why ``validate.min_solvable`` dropped it ('' when kept)."""

    def values(self, columns: tuple[str, ...]) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in columns)


NONE = ItemLabel(None, None, None)


@dataclass
class Labels:
    """Labels by dataset and item id; counts of what each config published, for the card."""

    items: dict[str, dict[str, ItemLabel]]
    published: dict[str, Counter[str]] = field(default_factory=dict)
    """Per ``dataset/config``, its items by difficulty (``unlabelled`` without a label)."""
    left_out: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per dataset, the items left out and why."""
    by_release: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    """Per dataset and first release, each published item's level (``unlabelled``)."""
    columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per dataset, the labels its items have (those of :data:`COLUMNS` the panel gave)."""

    @classmethod
    def load(cls, data: Path) -> Labels | None:
        """The labels of ``data/validate/labels.parquet``; ``None`` when the stage did not run."""
        path = data / LABELS
        if not path.is_file():
            return None
        items: dict[str, dict[str, ItemLabel]] = {}
        for r in pq.read_table(path).to_pylist():
            dropped = r["reason"] if r["status"] == "dropped" else ""
            label = ItemLabel(r["solvable"], r["closed_book"], r["difficulty"], dropped)
            items.setdefault(r["dataset"], {})[r["item_id"]] = label
        columns = {
            dataset: tuple(
                c for c in COLUMNS if any(getattr(la, c) is not None for la in mine.values())
            )
            for dataset, mine in items.items()
        }
        return cls(items, columns=columns)

    def for_config(self, dataset: str, name: str, spec: ConfigSpec) -> ConfigLabels | None:
        """What labels exported config ``name`` of ``dataset``, when its rows are items."""
        return ConfigLabels(self, dataset, name, spec.labelled) if spec.labelled else None

    def report(self, data: Path) -> dict[str, Any]:
        """The panel's report (``validate.json``)."""
        return json.loads((data / PANEL_REPORT).read_text("utf-8"))

    def card_section(self, dataset: str, data: Path) -> str:
        """The card's section: the panel, levels per config and release, the noise floor."""
        mine = {k.partition("/")[2]: dict(c) for k, c in self.published.items()
                if k.startswith(f"{dataset}/")}  # fmt: skip
        releases = self.by_release.get(dataset, {})
        by_release = {r: dict(Counter(items.values())) for r, items in sorted(releases.items())}
        left = Counter(r.split(":", 1)[0] for r in self.left_out.get(dataset, {}).values())
        return card_markdown(dataset, self.report(data), mine, by_release, left)

    def of(self, dataset: str, item: str) -> ItemLabel:
        return self.items.get(dataset, {}).get(item, NONE)

    def _count(
        self, dataset: str, config: str, items: list[tuple[str, ItemLabel, str | None]]
    ) -> None:
        """Count ``(item, label, first release)`` of what a config publishes."""
        counts = self.published.setdefault(f"{dataset}/{config}", Counter())
        releases = self.by_release.setdefault(dataset, {})
        for item, label, release in items:
            level = label.difficulty or UNLABELLED
            counts[level] += 1
            releases.setdefault(release or "undated", {})[item] = level

    def _left_out(self, dataset: str, item: str, label: ItemLabel) -> None:
        self.left_out.setdefault(dataset, {})[item] = label.dropped

    def add_columns(self, table: pa.Table, dataset: str, config: str, how: str) -> pa.Table:
        """``table`` with its items' labels, the dropped ones left out (see the module
        docstring for ``how``)."""
        if how == "insights":
            return self._insights(table, dataset, config)
        ids = [str(i) for i in table.column(how).to_pylist()]
        labels = [self.of(dataset, i) for i in ids]
        for item, label in zip(ids, labels, strict=True):
            if label.dropped:
                self._left_out(dataset, item, label)
        keep = [not label.dropped for label in labels]
        if not all(keep):
            table = table.filter(pa.array(keep, pa.bool_()))
            ids = [i for i, k in zip(ids, keep, strict=True) if k]
            labels = [la for la, k in zip(labels, keep, strict=True) if k]
        items = zip(ids, labels, _releases(table), strict=True)
        self._count(dataset, config, list(items))
        for name in self.columns.get(dataset, ()):
            kind = COLUMNS[name]
            values = [getattr(la, name) for la in labels]
            table = table.append_column(pa.field(name, kind), pa.array(values, kind))
        return table

    def _insights(self, table: pa.Table, dataset: str, config: str) -> pa.Table:
        """Every insight of every row with its labels; dropped insights leave their row."""
        rows = table.to_pylist()
        seen: list[tuple[str, ItemLabel, str | None]] = []
        columns = self.columns.get(dataset, ())

        def labelled(
            topic: str, insights: list[Mapping[str, Any]], release: str | None
        ) -> list[dict[str, Any]]:
            out = []
            for insight in insights:
                item = f"{topic}/{insight['insight_id']}"
                label = self.of(dataset, item)
                if label.dropped:
                    self._left_out(dataset, item, label)
                    continue
                seen.append((item, label, release))
                out.append({**insight, **dict(zip(columns, label.values(columns), strict=True))})
            return out

        kept = []
        for row in rows:
            if "subtopics" in row:
                for subtopic in row["subtopics"]:
                    subtopic["insights"] = labelled(
                        row["topic_id"], subtopic["insights"], row.get("first_release")
                    )
                kept.append(row)
                continue
            had = bool(row["insights"])
            row["insights"] = labelled(row["topic_id"], row["insights"], row.get("first_release"))
            if had and not row["insights"]:
                continue  # every insight of the subtopic was dropped: so is the subtopic
            if "reference" in row:  # the subtopics view's reference: its insights, bulleted
                row["reference"] = bullets(i["text"] for i in row["insights"])
            kept.append(row)
        self._count(dataset, config, seen)
        return pa.Table.from_pylist(kept, schema=_labelled_schema(table.schema, columns))


def _releases(table: pa.Table) -> list[str | None]:
    """Each row's first release (dated rows), else ``None``."""
    if "first_release" in table.column_names:
        return table.column("first_release").to_pylist()
    return [None] * table.num_rows


@dataclass(frozen=True)
class ConfigLabels:
    """The labels one exported config's rows gain."""

    labels: Labels
    dataset: str
    name: str
    how: str

    def apply(self, table: pa.Table) -> pa.Table:
        """``table`` labelled, the dropped items left out."""
        return self.labels.add_columns(table, self.dataset, self.name, self.how)


def _with_labels(kind: pa.DataType, columns: tuple[str, ...]) -> pa.DataType:
    """An insight struct (or a list of them, or a subtopic holding them) with the columns."""
    if pa.types.is_list(kind):
        return pa.list_(_with_labels(kind.value_type, columns))
    if pa.types.is_struct(kind):
        names = [kind.field(i).name for i in range(kind.num_fields)]
        fields = [pa.field(f.name, _with_labels(f.type, columns) if f.name == "insights"
                           else f.type)
                  for f in (kind.field(i) for i in range(kind.num_fields))]  # fmt: skip
        if "insight_id" in names:
            fields += [pa.field(n, COLUMNS[n]) for n in columns]
        return pa.struct(fields)
    return kind


def _labelled_schema(schema: pa.Schema, columns: tuple[str, ...]) -> pa.Schema:
    return pa.schema(
        [
            pa.field(f.name, _with_labels(f.type, columns))
            if f.name in ("subtopics", "insights")
            else f
            for f in schema
        ]
    )
