"""A wiki stage killed with SIGKILL midway leaves the previous outputs untouched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from bench.wiki_dump import build_dump
from tests.support.snapshot import ROOT

pytestmark = pytest.mark.integration


def _params(tmp_path: Path, dump: Path, name: str) -> Path:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["wiki"]["dump"]["path"] = str(dump)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def _stage(params: Path, out: Path) -> list[str]:
    bindir = Path(sys.executable).parent
    return [str(bindir / "benchsmith"), "stage", "wiki", "--params", str(params), "--out", str(out)]


def test_killed_stage_keeps_previous_outputs(tmp_path):
    out = tmp_path / "wiki"
    small = _params(tmp_path, ROOT / "snapshot" / "wiki" / "export.xml", "small.yaml")
    subprocess.run(_stage(small, out), check=True, capture_output=True, cwd=tmp_path)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    big_dump = tmp_path / "big.xml"
    build_dump(4000, big_dump)  # about 12 s of parsing on one core
    big = _params(tmp_path, big_dump, "big.yaml")
    proc = subprocess.Popen(
        _stage(big, out),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob(".wiki.tmp-*/articles.parquet")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the run: rows are being written
    assert proc.poll() is None, "the stage finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()

    (left,) = tmp_path.glob(f".wiki.tmp-{proc.pid}-*")  # beside the output, never inside it
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    subprocess.run(_stage(small, out), check=True, capture_output=True, cwd=tmp_path)
    assert not left.exists() and not list(tmp_path.glob(".*.tmp-*"))
