"""The shared run context of every stage: scratch folder, atomic rename, timing and stats.

    with stage_run("wiki", out) as run:
        ...read inputs, write tables under run.scratch, count with run.stats...
        run.extra["reader"] = "dump"
    return run.stats

The clock starts when the block is entered, and so does the run's claim on ``out``: its scratch
folder, beside ``out``, is made then, so a second run on the same ``out`` fails at once with an
``OutputInUseError`` naming the first one's pid. When the block ends well, the failure ledger
of a stage that asks models (``llm_failures.parquet``) is written, then ``stats.json`` (counts,
drops, time, ``extra``, and the LLM accounting of ``run.client`` when the stage asked a model),
and everything is renamed into ``out``; when it raises, nothing of the run reaches ``out``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.failure_ledger import FAILURES, write_failures
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
    panel: list[Any] = field(default_factory=list)
    """More LLM clients (a panel's models): their failed asks join the failure ledger."""
    asks_models: bool = False
    """Whether the stage writes a failure ledger (``llm_failures.parquet``), empty or not."""

    def ledgers(self) -> list[Any]:
        """The failure ledgers of the stage's clients."""
        clients = [self.client] if self.client is not None else []
        return [c.failures for c in [*clients, *self.panel]]


@contextmanager
def stage_run(stage: str, out: Path, *, models: bool = False) -> Iterator[StageRun]:
    """Run a stage's body; see the module docstring. A stage that asks ``models`` writes its
    failure ledger, ``llm_failures.parquet``, from every client it set on the run."""
    run = StageRun(StageStats(stage), out, open_scratch(out), asks_models=models)
    try:
        yield run
        if run.asks_models:
            write_failures(run.scratch / FAILURES, run.ledgers())
        run.stats.write(run.scratch, run.client, **run.extra)
        commit_scratch(run.scratch, out)
    finally:
        shutil.rmtree(run.scratch, ignore_errors=True)
