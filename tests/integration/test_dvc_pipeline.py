"""`dvc repro` itself, on a temporary copy of the project."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from builders.drops import DROP_SCHEMA
from pipelines.dag.table import STAGES
from tests.support.dvc_project import CANARY, copy_project, dvc
from tests.support.snapshot import SNAPSHOT_EVENTS

pytestmark = pytest.mark.integration


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A fresh copy of the tracked project in its own git repository, without dvc.lock."""
    return copy_project(tmp_path / "project", lock=False)


def _titles(project: Path) -> set[str]:
    table = pq.read_table(project / "data" / "wiki" / "articles.parquet", columns=["title"])
    return set(table.column("title").to_pylist())


def test_repro_builds_the_selection_then_does_nothing_then_follows_params(project):
    first = dvc(project, "repro")
    assert "Running stage 'wiki'" in first and "Running stage 'summhay'" in first
    assert _titles(project) == SNAPSHOT_EVENTS
    assert (project / "dvc.lock").is_file()
    records = sorted(p.name for p in (project / "data" / "lveval" / "records").iterdir())
    assert records == [f"events_mixup_{n}k.parquet" for n in (2, 4, 8)]
    lveval = json.loads((project / "data" / "lveval_baselines" / "lveval.json").read_text())
    assert set(lveval["ak"]) == set(lveval["evidence_recall"]["bm25"]) == {"2k", "4k", "8k"}
    assert "ak_by_level.csv" in dvc(project, "plots", "show", "--json")
    lock = yaml.safe_load((project / "dvc.lock").read_text())
    records = next(
        o for o in lock["stages"]["lveval"]["outs"] if o["path"] == "data/lveval/records"
    )
    card = (project / "data" / "publish" / "lveval" / "README.md").read_text()
    assert f"| `data/lveval/records` | `{records['md5']}` |" in card
    assert "### lveval: ak" in card and "images/baseline_0.png" in card
    wikigen = json.loads((project / "data" / "wikigen_baselines" / "wikigen.json").read_text())
    assert set(wikigen["articles"]) == {"rr", "prr"}
    card = (project / "data" / "publish" / "wikigenbench" / "README.md").read_text()
    assert "### wikigen: articles" in card and "| rr / bm25 |" in card
    hub_files = [p for p in (project / "data" / "publish").rglob("*") if p.is_file()]
    assert {p.relative_to(project / "data" / "publish").parts[0] for p in hub_files} >= {
        "wikigenbench",
        "summhay",
        "lveval",
        "stats.json",
    }
    assert not any(CANARY.encode() in p.read_bytes() for p in hub_files)
    # every stage that leaves items out says so in one table shape, named by the stage
    drops = sorted((project / "data").glob("*/drops.parquet"))
    assert {p.parent.name for p in drops} == {"wiki", "summhay", "chunk", "lveval"}
    for path in drops:
        table = pq.read_table(path)
        assert table.schema.equals(DROP_SCHEMA, check_metadata=False), path
        assert set(table.column("stage").to_pylist()) <= {path.parent.name}, path
    articles = project / "data" / "wiki" / "articles.parquet"
    built = articles.stat().st_mtime_ns
    first_bytes = {p: p.read_bytes() for p in (project / "data").rglob("*.parquet")}

    second = dvc(project, "repro")
    assert "Running stage" not in second
    assert articles.stat().st_mtime_ns == built

    params_file = project / "params.yaml"
    params = yaml.safe_load(params_file.read_text())
    params["wiki"]["created_after"] = "2026-06-01"
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
    third = dvc(project, "repro")
    assert "Running stage 'wiki'" in third
    later = _titles(project)
    assert later and later < SNAPSHOT_EVENTS
    assert "Cyclone Imre" not in later  # created in January
    assert "Up to date" in dvc(project, "status") or "up to date" in dvc(project, "status")
    assert CANARY not in (project / "dvc.lock").read_text()
    entries = project / "data" / "wikigen" / "entries.parquet"
    assert entries.is_file() and CANARY.encode() not in entries.read_bytes()

    haystacks = project / "data" / "summhay" / "haystacks.parquet"
    assert pq.read_table(haystacks).num_rows >= 1
    bounds = json.loads((project / "data" / "summhay_baselines" / "summhay.json").read_text())
    assert bounds["coverage_bound"]["oracle"] == 100.0

    # the window moves back: every stage comes back from DVC's run cache without running
    params["wiki"]["created_after"] = "2026-01-01"
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
    restored = dvc(project, "repro")
    assert "Running stage" not in restored
    for stage in STAGES:
        assert f"Stage '{stage}' is cached - skipping run, checking out outputs" in restored
    assert {p: p.read_bytes() for p in first_bytes} == first_bytes

    params = yaml.safe_load(params_file.read_text())
    params["summhay"]["documents"] = 12
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
    fourth = dvc(project, "repro")
    assert "Running stage 'summhay'" in fourth and "Running stage 'summhay_baselines'" in fourth
    untouched = ("wiki", "web", "wikigen", "lveval", "lveval_baselines")
    assert not any(f"Running stage '{s}'" in fourth for s in untouched)
    table = pq.read_table(haystacks).to_pylist()
    assert table and all(len(row["documents"]) == 12 for row in table)
