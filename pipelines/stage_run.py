"""The shared run context of every stage: scratch folder, atomic rename, timing and stats.

    with stage_run("wiki", out) as run:
        ...read inputs, write tables under run.scratch, count with run.stats...
        run.extra["reader"] = "dump"
    return run.stats

The clock starts when the block is entered. The scratch folder beside ``out`` is made the first
time ``run.scratch`` is used, so a stage that fails while reading its inputs leaves no trace.
When the block ends well, ``stats.json`` (counts, drops, time, ``extra``, and the LLM
accounting of ``run.client`` when the stage asked a model) is written last and everything is
renamed into ``out``; when it raises, nothing of the run reaches ``out``.
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
    extra: dict[str, Any] = field(default_factory=dict)
    """More top-level entries of ``stats.json`` (settings echoed, encoder, levels, ...)."""
    client: Any = None
    """The stage's LLM client, if it has one: its accounting becomes the ``llm`` block."""
    _scratch: Path | None = None

    @property
    def scratch(self) -> Path:
        """Where the stage writes; renamed into ``out`` when the run ends well."""
        if self._scratch is None:
            self._scratch = open_scratch(self.out)
        return self._scratch


@contextmanager
def stage_run(stage: str, out: Path) -> Iterator[StageRun]:
    """Run a stage's body; see the module docstring."""
    run = StageRun(StageStats(stage), out)
    try:
        yield run
        run.stats.write(run.scratch, run.client, **run.extra)
        commit_scratch(run.scratch, out)
    finally:
        if run._scratch is not None:
            shutil.rmtree(run._scratch, ignore_errors=True)
