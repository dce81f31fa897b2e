"""Per-stage statistics, written as ``stats.json`` and tracked by DVC as metrics."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.outputs import write_json


@dataclass
class StageStats:
    """Counts in and out, drop reasons and wall time of one stage run, and the headline figures
    of its one-line summary."""

    stage: str
    counts: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)
    duration_s: float = 0.0
    headline: dict[str, Any] = field(default_factory=dict)
    """The few figures the stage's ``summary`` prints besides the counts (a mean score, the
    model asked), so it need not read the metrics file back. Not written to ``stats.json``:
    the stage's metrics file holds them."""

    def update(self, key: str, n: int = 1) -> None:
        """Add ``n`` to the counter ``key``."""
        self.counts[key] += n

    def drop(self, reason: str) -> None:
        """Count one item dropped for ``reason``."""
        self.dropped[reason] += 1

    def show(self, **figures: Any) -> None:
        """Keep ``figures`` in ``headline`` for the summary line; a mapping's keys in sorted
        order, as the stage's metrics file (``write_json``) lists them."""
        for name, value in figures.items():
            sorted_value = dict(sorted(value.items())) if isinstance(value, Mapping) else value
            self.headline[name] = sorted_value

    def count_status(self, row: Mapping[str, Any], counted: str, dropped: str) -> None:
        """Count an answer ``row`` as ``<counted>_<status>``; one that is not ok is also dropped
        for the first part of its reason (``<dropped>_<reason up to ':'>``)."""
        self.update(f"{counted}_{row['status']}")
        if row["status"] != "ok":
            self.drop(f"{dropped}_{str(row['reason']).split(':', 1)[0]}")

    def finish(self) -> StageStats:
        """Stop the clock."""
        self.duration_s = round(time.monotonic() - self.started, 3)
        return self

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form, with reasons sorted for stable diffs."""
        return {
            "stage": self.stage,
            "counts": dict(sorted(self.counts.items())),
            "dropped": dict(sorted(self.dropped.items())),
            "duration_s": self.duration_s,
        }

    def write(self, folder: Path, client: Any = None, **extra: Any) -> None:
        """Stop the clock and write ``folder/stats.json``: the counts, ``extra``, and the LLM
        accounting of ``client`` when there is one."""
        self.finish()
        summary = {**self.to_dict(), **extra}
        if client is not None:
            summary["llm"] = client.stats()
        write_json(folder / "stats.json", summary)
