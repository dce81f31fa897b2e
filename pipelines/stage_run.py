"""The shared run context of every stage: scratch folder, atomic rename, timing and stats.

    with stage_run("wiki", out) as run:
        ...write tables under run.scratch, count with run.stats...
        run.extra["reader"] = "dump"
    return run.stats

When the block ends well, ``stats.json`` (counts, drops, time, ``extra``, and the LLM
accounting of ``run.client`` when the stage asked a model) is written last and everything is
renamed into ``out``; when it raises, nothing of the run reaches ``out``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.outputs import staged_outputs
from pipelines.stats import StageStats


@dataclass
class StageRun:
    """What a stage fills in while it runs."""

    stats: StageStats
    scratch: Path
    extra: dict[str, Any] = field(default_factory=dict)
    """More top-level entries of ``stats.json`` (settings echoed, encoder, levels, ...)."""
    client: Any = None
    """The stage's LLM client, if it has one: its accounting becomes the ``llm`` block."""


@contextmanager
def stage_run(stage: str, out: Path) -> Iterator[StageRun]:
    """Run a stage's body against a scratch folder beside ``out``; see the module docstring."""
    with staged_outputs(out) as scratch:
        run = StageRun(StageStats(stage), scratch)
        yield run
        run.stats.write(scratch, run.client, **run.extra)
