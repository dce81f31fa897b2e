"""Folders built once per test run and read by every pytest-xdist worker.

A session fixture runs once per worker process. What several workers only read (the snapshot's
stage outputs, the Hub export) is built by the first worker that asks, under a file lock in the
run's shared temporary folder; the others wait for it and read the same folder. Without xdist
the folder sits in the session's own temporary folder.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

DONE = ".built"
"""Marker written after a build finished; a folder without it is built again."""


def run_folder(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder every worker of this run shares."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` after ``build(folder)`` filled it, once per test run.

    The folder counts as built only once ``build`` has returned (a marker file says so): a
    failed or killed build is removed and built again by the next worker that asks."""
    shared = run_folder(factory) / "shared"
    shared.mkdir(exist_ok=True)
    target = shared / name
    with open(shared / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / DONE).is_file():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            build(target)
            (target / DONE).touch()
    return target
