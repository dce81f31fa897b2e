"""Scratch folders: beside their output, owned by their run, cleared once their run is dead."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipelines.outputs import (
    OutputInUseError,
    clear_dead_scratches,
    open_scratch,
    process_start,
    scratches,
    staged_outputs,
)
from tests.support.snapshot import ROOT

HOLDER = (
    "import sys; from pathlib import Path; from pipelines.outputs import open_scratch; "
    "print(open_scratch(Path(sys.argv[1])), flush=True); sys.stdin.read()"
)


@pytest.fixture
def holder(tmp_path: Path):
    """Another process holding a scratch folder of ``tmp_path / 'lveval'``, and that folder."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / "lveval")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    held = Path(child.stdout.readline().strip())
    yield child, held
    if child.poll() is None:
        child.kill()
    child.wait()


def _waited_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_scratch_sits_beside_the_output_and_is_renamed_into_it(tmp_path):
    out = tmp_path / "lveval"
    with staged_outputs(out) as scratch:
        assert scratch.parent == tmp_path and scratch.name.startswith(f".lveval.tmp-{os.getpid()}-")
        (scratch / "qa.parquet").write_bytes(b"rows")
        assert not out.exists()  # nothing reaches the output before the end
    assert (out / "qa.parquet").read_bytes() == b"rows"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lveval"]


def test_a_second_run_on_the_same_output_fails_at_once_naming_the_pid(tmp_path, holder):
    child, held = holder
    assert held.parent == tmp_path and held.is_dir()
    started = time.monotonic()
    with pytest.raises(OutputInUseError, match=f"in use by pid {child.pid}"):
        open_scratch(tmp_path / "lveval")
    assert time.monotonic() - started < 0.5
    assert held.is_dir()  # the live run's folder is left alone
    assert [s.path for s in scratches(tmp_path / "lveval")] == [held]
    with staged_outputs(tmp_path / "other") as scratch:  # another output is free
        assert scratch.is_dir()


def test_a_killed_runs_scratch_is_cleared_by_the_next_run(tmp_path, holder):
    child, held = holder
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert held.is_dir() and not (tmp_path / "lveval").exists()  # beside the output, not in it
    with staged_outputs(tmp_path / "lveval") as scratch:
        assert not held.exists()
        (scratch / "stats.json").write_text("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lveval"]


def test_dead_owners_are_cleared_and_live_ones_kept(tmp_path):
    dead, now = _waited_pid(), time.time_ns()
    out = tmp_path / "chunk"
    (out / f".tmp-{dead}").mkdir(parents=True)  # left inside by an earlier version
    gone = [tmp_path / f".chunk.tmp-{dead}-{now}", tmp_path / f".wiki.tmp-{dead}-{now}"]
    started = process_start(os.getpid())
    if started is not None:  # our own pid, but the folder is older than this process: reused
        gone.append(tmp_path / f".embed.tmp-{os.getpid()}-{int((started - 60) * 1e9)}")
    alive = tmp_path / f".web.tmp-{os.getppid()}-{now}"
    unrelated = tmp_path / f".notes.tmp-{dead}"  # not a scratch folder's name
    for path in [*gone, alive, unrelated]:
        path.mkdir()
    removed = clear_dead_scratches(tmp_path) + clear_dead_scratches(out)
    assert sorted(removed) == sorted([*gone, out / f".tmp-{dead}"])
    assert alive.is_dir() and unrelated.is_dir()


def test_a_failing_run_leaves_nothing(tmp_path):
    out = tmp_path / "wiki"
    with pytest.raises(RuntimeError), staged_outputs(out) as scratch:
        (scratch / "articles.parquet").write_bytes(b"half")
        raise RuntimeError("stage failed")
    assert list(tmp_path.iterdir()) == []
