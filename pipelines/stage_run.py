"""The shared run context of every stage: scratch folder, atomic rename, timing and stats.

    with stage_run("wiki", out) as run:
        ...read inputs, write tables under run.scratch, count with run.stats...
        run.extra["reader"] = "dump"
    return run.stats

The clock starts when the block is entered, and so does the run's claim on ``out``: its scratch
folder, beside ``out``, is made then, so a second run on the same ``out`` fails at once with an
``OutputInUseError`` naming the first one's pid. When the block ends well, ``stats.json``
(counts, drops, time, ``extra``, and the LLM accounting of ``run.client`` when the stage asked a
model) is written last and everything is renamed into ``out``; when it raises, nothing of the
run reaches ``out``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.outputs import commit_scratch, open_scratch
from pipelines.stats import StageStats


@dataclass
class StageRun:
    """What a stage fills in while it runs."""

    stats: StageStats
    out: Path
    scratch: Path
    """Where the stage writes, beside ``out``; renamed into ``out`` when the run ends well."""
    extra: dict[str, Any] = field(default_factory=dict)
    """More top-level entries of ``stats.json`` (settings echoed, encoder, levels, ...)."""
    client: Any = None
    """The stage's LLM client, if it has one: its accounting becomes the ``llm`` block."""


@contextmanager
def stage_run(stage: str, out: Path) -> Iterator[StageRun]:
    """Run a stage's body; see the module docstring."""
    run = StageRun(StageStats(stage), out, open_scratch(out))
    try:
        yield run
        run.stats.write(run.scratch, run.client, **run.extra)
        commit_scratch(run.scratch, out)
    finally:
        shutil.rmtree(run.scratch, ignore_errors=True)
