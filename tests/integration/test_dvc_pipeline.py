"""`dvc repro` itself, on a temporary copy of the project."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from tests.support.snapshot import ROOT, SNAPSHOT_EVENTS

pytestmark = pytest.mark.integration

CANARY = "AIzaCANARY-dvc-0123456789abcdefghijklmnop"


def _project_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [f for f in listed if (ROOT / f).is_file() and f != "dvc.lock"]


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A fresh copy of the tracked project in its own git repository, without dvc.lock."""
    copy = tmp_path / "project"
    for name in _project_files():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    return copy


def _dvc(project: Path, *args: str) -> str:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "DVC_NO_ANALYTICS": "1",
        "GOOGLE_API_KEY": CANARY,
    }
    result = subprocess.run(
        [str(Path(sys.executable).parent / "dvc"), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def _titles(project: Path) -> set[str]:
    table = pq.read_table(project / "data" / "wiki" / "articles.parquet", columns=["title"])
    return set(table.column("title").to_pylist())


def test_repro_builds_the_selection_then_does_nothing_then_follows_params(project):
    first = _dvc(project, "repro")
    assert "Running stage 'wiki'" in first and "Running stage 'summhay'" in first
    assert _titles(project) == SNAPSHOT_EVENTS
    assert (project / "dvc.lock").is_file()
    records = sorted(p.name for p in (project / "data" / "lveval" / "records").iterdir())
    assert records == [f"events_mixup_{n}k.parquet" for n in (2, 4, 8)]
    lveval = json.loads((project / "data" / "lveval_baselines" / "lveval.json").read_text())
    assert set(lveval["ak"]) == set(lveval["evidence_recall"]["bm25"]) == {"2k", "4k", "8k"}
    assert "ak_by_level.csv" in _dvc(project, "plots", "show", "--json")
    lock = yaml.safe_load((project / "dvc.lock").read_text())
    records = next(
        o for o in lock["stages"]["lveval"]["outs"] if o["path"] == "data/lveval/records"
    )
    card = (project / "data" / "hub" / "lveval" / "README.md").read_text()
    assert f"| `data/lveval/records` | `{records['md5']}` |" in card
    assert "### lveval: ak" in card and "images/baseline_0.png" in card
    wikigen = json.loads((project / "data" / "wikigen_baselines" / "wikigen.json").read_text())
    assert set(wikigen["articles"]) == {"rr", "prr"}
    card = (project / "data" / "hub" / "wikigenbench" / "README.md").read_text()
    assert "### wikigen: articles" in card and "| rr / bm25 |" in card
    hub_files = [p for p in (project / "data" / "hub").rglob("*") if p.is_file()]
    assert {p.relative_to(project / "data" / "hub").parts[0] for p in hub_files} >= {
        "wikigenbench",
        "summhay",
        "lveval",
        "stats.json",
    }
    assert not any(CANARY.encode() in p.read_bytes() for p in hub_files)
    articles = project / "data" / "wiki" / "articles.parquet"
    built = articles.stat().st_mtime_ns

    second = _dvc(project, "repro")
    assert "Running stage" not in second
    assert articles.stat().st_mtime_ns == built

    params_file = project / "params.yaml"
    params = yaml.safe_load(params_file.read_text())
    params["wiki"]["created_after"] = "2026-06-01"
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
    third = _dvc(project, "repro")
    assert "Running stage 'wiki'" in third
    later = _titles(project)
    assert later and later < SNAPSHOT_EVENTS
    assert "Cyclone Imre" not in later  # created in January
    assert "Up to date" in _dvc(project, "status") or "up to date" in _dvc(project, "status")
    assert CANARY not in (project / "dvc.lock").read_text()
    entries = project / "data" / "wikigen" / "entries.parquet"
    assert entries.is_file() and CANARY.encode() not in entries.read_bytes()

    haystacks = project / "data" / "summhay" / "haystacks.parquet"
    assert pq.read_table(haystacks).num_rows >= 1
    bounds = json.loads((project / "data" / "baselines" / "summhay.json").read_text())
    assert bounds["coverage_bound"]["oracle"] == 100.0

    params = yaml.safe_load(params_file.read_text())
    params["summhay"]["documents"] = 12
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
    fourth = _dvc(project, "repro")
    assert "Running stage 'summhay'" in fourth and "Running stage 'baselines'" in fourth
    untouched = ("wiki", "web", "wikigen", "lveval", "lveval_baselines")
    assert not any(f"Running stage '{s}'" in fourth for s in untouched)
    table = pq.read_table(haystacks).to_pylist()
    assert table and all(len(row["documents"]) == 12 for row in table)
