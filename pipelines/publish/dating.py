"""Dated rows: every published row carries its event's creation day, its event date and the
release it first appeared in, so a consumer keeps "items after my model's cutoff" with one
filter (``event_created_at > cutoff``).

A config names how its rows reach their event (:class:`~pipelines.publish.registry.Dated`): a
column holding the event id (``event_id``, ``entry_id``, a SummHay topic's ``source``), or a
column that a table maps to it (an LV-Eval record's ``qa_id`` -> its QA item's ``source``). The
events' dates come from the wikigen entries; an item's first release is the first release of
``publish.history`` (then the current one) whose window reached its event's creation day.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from builders.releases import Release, first_release
from builders.wikigen.event_date import event_date
from pipelines.errors import MissingInputError
from pipelines.publish.registry import ENTRIES, ConfigSpec

COLUMNS = ("event_created_at", "event_date", "first_release")
"""The columns every published row gains, in this order, at the end."""
TYPES = (pa.timestamp("us", tz="UTC"), pa.string(), pa.string())
EVENT_PREFIX = "event:"
"""SummHay topics taken from events name them ``event:<event id>`` in ``source``."""


@dataclass(frozen=True)
class Event:
    """What the dating columns and the release record need of one event."""

    title: str
    created_at: datetime | None
    event_date: str | None


UNDATED = Event("", None, None)
"""A row of no event (a hand-written topic, a Hub QA item)."""


@dataclass
class Dating:
    """Event dates by event id, the releases, and which items to publish."""

    events: dict[str, Event]
    releases: list[Release]
    only_new: bool = False
    _maps: dict[str, dict[Any, Any]] = field(default_factory=dict)

    @property
    def version(self) -> str:
        """The release being built."""
        return self.releases[-1].version

    @classmethod
    def load(cls, data: Path, releases: Sequence[Release], only_new: bool = False) -> Dating:
        """The dates of every event of ``data/wikigen/entries.parquet``."""
        path = data / ENTRIES
        if not path.is_file():
            raise MissingInputError(f"missing {path} (the events' dates for every row)", path)
        columns = ["event_id", "title", "created_at", "infobox"]
        events = {
            r["event_id"]: Event(
                r["title"],
                r["created_at"],
                event_date({kv["key"]: kv["value"] for kv in r["infobox"] or []}),
            )
            for r in pq.read_table(path, columns=columns).to_pylist()
        }
        return cls(events, list(releases), only_new)

    def _event_ids(self, table: pa.Table, spec: ConfigSpec, data: Path) -> list[Any]:
        dated = spec.dated
        assert dated is not None
        keys = table.column(dated.key).to_pylist()
        if dated.via is not None:
            if dated.via.source not in self._maps:
                path = data / dated.via.source
                if not path.is_file():
                    raise MissingInputError(f"missing {path} (dates of {spec.name!r})", path)
                mapping = pq.read_table(path, columns=[dated.via.key, *dated.via.columns])
                self._maps[dated.via.source] = dict(
                    zip(*(mapping.column(c).to_pylist() for c in mapping.column_names), strict=True)
                )
            keys = [self._maps[dated.via.source].get(k) for k in keys]
        return [k.removeprefix(EVENT_PREFIX) if isinstance(k, str) else k for k in keys]

    def add_columns(self, table: pa.Table, spec: ConfigSpec, data: Path) -> pa.Table:
        """``table`` with the three dating columns appended (and, publishing only new items,
        only the rows this release adds)."""
        if spec.dated is None:
            return table
        created, dates, firsts = [], [], []
        for event_id in self._event_ids(table, spec, data):
            event = self.events.get(event_id, UNDATED)
            created.append(event.created_at)
            dates.append(event.event_date)
            firsts.append(first_release(event.created_at, self.releases).version)
        for name, kind, values in zip(COLUMNS, TYPES, (created, dates, firsts), strict=True):
            table = table.append_column(pa.field(name, kind), pa.array(values, kind))
        if self.only_new:
            table = table.filter(pc.equal(table.column("first_release"), self.version))
        return table
