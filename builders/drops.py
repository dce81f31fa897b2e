"""One record for everything a stage leaves out, in every stage's ``drops.parquet``.

A drop names the stage, the item's group (a SummHay topic, an LV-Eval dataset, a chunk corpus),
the kind and key of the item, the step that turned it away, a short machine ``reason`` and a
sentence of ``detail``. What only one stage knows about the item (a wiki page's id, URL and
creation time) goes in ``facts``, as text, so every stage's table has the same columns and the
tables can be read together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa

DROPS = "drops.parquet"
"""The file name of a stage's drop table, in the stage's output folder."""


def _fact(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return "" if value is None else str(value)


@dataclass(frozen=True)
class Drop:
    """An item a stage left out: which one, where, and why."""

    stage: str
    group: str
    kind: str
    item_id: str
    step: str
    reason: str
    detail: str = ""
    facts: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        stage: str,
        group: str,
        kind: str,
        item_id: str,
        step: str,
        reason: str,
        detail: str = "",
        **facts: object,
    ) -> Drop:
        """A drop whose ``facts`` are given as keywords (``None`` becomes ``""``, times ISO)."""
        return cls(
            stage,
            group,
            kind,
            item_id,
            step,
            reason,
            detail,
            {k: _fact(v) for k, v in facts.items()},
        )

    def to_row(self) -> dict[str, Any]:
        """Return the record as a row matching :data:`DROP_SCHEMA`."""
        return {
            "stage": self.stage,
            "group": self.group,
            "kind": self.kind,
            "item_id": self.item_id,
            "step": self.step,
            "reason": self.reason,
            "detail": self.detail,
            "facts": [{"key": k, "value": v} for k, v in self.facts.items()],
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Drop:
        """The record of a :data:`DROP_SCHEMA` row."""
        facts = {f["key"]: f["value"] for f in row.get("facts") or ()}
        fields = ("stage", "group", "kind", "item_id", "step", "reason", "detail")
        return cls(*(row[k] or "" for k in fields), facts)


DROP_SCHEMA = pa.schema(
    [
        pa.field("stage", pa.string(), nullable=False),
        pa.field("group", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("item_id", pa.string(), nullable=False),
        pa.field("step", pa.string()),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("detail", pa.string()),
        pa.field("facts", pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))),
    ]
)
"""The Arrow schema of :class:`Drop`, the same in every stage."""
