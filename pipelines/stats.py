"""Per-stage statistics, written as ``stats.json`` and tracked by DVC as metrics."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.outputs import write_json


@dataclass
class StageStats:
    """Counts in and out, drop reasons and wall time of one stage run."""

    stage: str
    counts: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)
    duration_s: float = 0.0

    def update(self, key: str, n: int = 1) -> None:
        """Add ``n`` to the counter ``key``."""
        self.counts[key] += n

    def drop(self, reason: str) -> None:
        """Count one item dropped for ``reason``."""
        self.dropped[reason] += 1

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
