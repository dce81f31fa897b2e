"""`dvc repro` itself, on a temporary copy of the project in a smaller world (SMALLER_WORLD)."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from builders.drops import DROP_SCHEMA
from pipelines.dag.table import STAGES
from pipelines.publish.registry import DATASETS
from tests.support.dvc_project import CANARY, copy_project, dvc, tool
from tests.support.snapshot import SNAPSHOT_EVENTS
from tests.support.tiny_encoder import save_tiny_bert

pytestmark = pytest.mark.integration


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A fresh copy of the tracked project in its own git repository, without dvc.lock."""
    return copy_project(tmp_path / "project", lock=False)


def _titles(project: Path) -> set[str]:
    table = pq.read_table(project / "data" / "wiki" / "articles.parquet", columns=["title"])
    return set(table.column("title").to_pylist())


FIRST_WINDOW = ("2026-06-01", "2026-10-31")
WINDOW_EVENTS = {
    "Brannock Bridge collapse",
    "2026 Korvenna Cup",
    "2026 Estmark wildfires",
    "Northern Air Flight 311",
    "2026 Lantern Tide Festival",
    "Orlin Horizon 2026",
}
"""The snapshot's events created in the first window (14 June to 6 October 2026)."""
LATE_EVENT = "2026 Sorrel Bay oil spill"
"""The snapshot's last event (created 3 November 2026): the first build stops before it."""
NARROWER = "2026-09-01"
NARROWER_EVENTS = {"2026 Lantern Tide Festival", "Orlin Horizon 2026", LATE_EVENT}

LEVELS = ["1k", "2k"]
SMALLER_WORLD = {
    "lveval": {"levels": LEVELS},
    "lveval_baselines": {"retrievers": ["random", "bm25"]},
    "wikigen_baselines": {
        "retrievers": ["random", "bm25"],
        "prr_retriever": "bm25",
        "meteor": False,
        "judge_scores": [],
        "outline_metrics": False,
    },
    "summhay_baselines": {"retrievers": ["random", "keywords", "bm25", "oracle"]},
}
"""What this test changes of the snapshot's settings besides the window and the encoder. DVC's
behaviour does not depend on the number of events, on context length, on which retrievers rank
or on which encoder embeds, or on the article scores (METEOR's jar, the judges, the outline metrics), and every stage runs in four
builds here: on the snapshot's twelve
events, LV-Eval levels (2k, 4k, 8k) and the dense retriever (which embeds every record's context
anew), lveval_baselines alone took 74 s a build. The embed stage still embeds every chunk, with
a tiny random BERT (``tests.support.tiny_encoder``: MiniLM's tokenizer, so the chunks are the
same) instead of MiniLM; the stage tests cover MiniLM, the dense retrievers and the whole
snapshot."""


def _stats(project: Path) -> dict[str, dict]:
    return {
        p.parent.name: json.loads(p.read_text())
        for p in (project / "data").glob("*/stats.json")
        if p.parent.name != "publish"
    }


def _published(project: Path, name: str) -> dict[str, list[dict]]:
    """Every row of every config of an export."""
    out = {}
    for folder in sorted((project / "data" / "publish" / name).iterdir()):
        shards = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
        if shards:
            out[folder.name] = [r for f in shards for r in pq.read_table(f).to_pylist()]
    return out


def _check_refresh(project: Path, before: dict[str, dict], output: str) -> None:
    """The refresh to 2026.12.0 added exactly the late event's items; every old item of every
    dataset kept its id, split and bytes; no old model ask or embedding was redone."""
    assert "2026.11.0 (to 2026-10-31) -> 2026.12.0 (to 2026-12-31)" in output
    params = yaml.safe_load((project / "params.yaml").read_text())
    assert params["publish"]["history"] == [{"version": "2026.11.0", "until": "2026-10-31"}]
    late = pq.read_table(project / "data/wikigen/entries.parquet").to_pylist()
    late_id = next(r["event_id"] for r in late if r["title"] == LATE_EVENT)
    qa = pq.read_table(project / "data/lveval/qa.parquet").to_pylist()
    new_qa = {r["qa_id"] for r in qa if r["source"] == late_id}
    assert new_qa
    for name in DATASETS:
        old = json.loads((project / "releases" / "2026.11.0" / f"{name}.json").read_text())
        new = json.loads((project / "data" / "publish" / name / "release.json").read_text())
        rows = _published(project, name)
        for config, items in old["configs"].items():
            assert {k: new["configs"][config][k] for k in items} == items, (name, config)
        for config, published in rows.items():
            for row in published:
                fresh = row["event_created_at"] is not None and row["event_created_at"].date() > (
                    date(2026, 10, 31)
                )
                assert row["first_release"] == ("2026.12.0" if fresh else "2026.11.0"), config
            added = set(new["configs"].get(config, {})) - set(old["configs"].get(config, {}))
            assert len(added) == sum(r["first_release"] == "2026.12.0" for r in published)
        changelog = (project / "data" / "publish" / name / "CHANGELOG.md").read_text()
        assert "**Events:** 1 added, 0 removed." in changelog
        assert f"- added: {LATE_EVENT} (`{late_id}`" in changelog
        assert changelog.index("## 2026.12.0") < changelog.index("## 2026.11.0")
        for config in new["configs"]:
            a, b = old["configs"].get(config, {}), new["configs"][config]
            row = f"| {config} | {len(a)} | {len(b)} | {len(b) - len(a)} | 0 | {len(a)} | 0 | 0 |"
            assert row in changelog, (name, row)
        card = (project / "data" / "publish" / name / "README.md").read_text()
        assert "## Releases and dates" in card and "#### Baselines" in card
    lveval_rows = _published(project, "lveval")
    assert {r["qa_id"] for c, rs in lveval_rows.items() for r in rs
            if r["first_release"] == "2026.12.0"} == new_qa  # fmt: skip
    # the caches: only new items were asked, embedded or answered
    after = _stats(project)
    ran = {s for s in after if after[s] != before.get(s)}
    assert "summhay" not in ran or after["summhay"]["llm"]["calls"] == 0
    questions = after["lveval"]["llm"]["by_prompt"]["lveval/questions"]
    assert (questions["calls"], questions["cache_hits"]) == (1, len(WINDOW_EVENTS))
    new_records = sum(
        r["qa_id"] in new_qa for c, rs in lveval_rows.items() if c != "qa" for r in rs
    )
    assert after["lveval_baselines"]["llm"]["calls"] == new_records
    outline = after["wikigen_baselines"]["llm"]["by_prompt"]["wikigen/outline"]
    assert (outline["calls"], outline["cache_hits"]) == (1, len(WINDOW_EVENTS))
    chunks = pq.read_table(project / "data/chunk/chunks.parquet").to_pylist()
    new_chunks = sum(c["entry_id"] == late_id for c in chunks if c["corpus"] == "web")
    assert after["embed"]["counts"]["embedded"] == new_chunks > 0
    probe = after["contamination"]["llm"]
    assert (
        probe["calls"] == len(new_qa) + 1 and probe["cache_hits"] == probe["asks"] - probe["calls"]
    )


def test_repro_builds_the_selection_then_does_nothing_then_follows_params(project):
    params_file = project / "params.yaml"
    params = yaml.safe_load(params_file.read_text())
    params["wiki"]["created_after"], params["wiki"]["created_before"] = FIRST_WINDOW
    for key, settings in SMALLER_WORLD.items():
        params[key].update(settings)
    params["embed"]["model"] = str(save_tiny_bert(project.parent / "tiny-bert"))
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
    first = dvc(project, "repro")
    assert "Running stage 'wiki'" in first and "Running stage 'summhay'" in first
    assert WINDOW_EVENTS < SNAPSHOT_EVENTS
    assert _titles(project) == WINDOW_EVENTS
    before = _stats(project)
    refreshed = tool(project, "benchsmith", "refresh", "--until", "2026-12-31", "--version",
                     "2026.12.0")  # fmt: skip
    assert _titles(project) == WINDOW_EVENTS | {LATE_EVENT}
    _check_refresh(project, before, refreshed)
    assert (project / "dvc.lock").is_file()
    records = sorted(p.name for p in (project / "data" / "lveval" / "records").iterdir())
    assert records == [f"events_mixup_{level}.parquet" for level in LEVELS]
    lveval = json.loads((project / "data" / "lveval_baselines" / "lveval.json").read_text())
    assert set(lveval["ak"]) == set(lveval["evidence_recall"]["bm25"]) == set(LEVELS)
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

    params = yaml.safe_load(params_file.read_text())
    params["wiki"]["created_after"] = NARROWER
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
    third = dvc(project, "repro")
    assert "Running stage 'wiki'" in third
    later = _titles(project)
    assert later == NARROWER_EVENTS  # "Brannock Bridge collapse", created in June, is out
    assert "Up to date" in dvc(project, "status") or "up to date" in dvc(project, "status")
    assert CANARY not in (project / "dvc.lock").read_text()
    entries = project / "data" / "wikigen" / "entries.parquet"
    assert entries.is_file() and CANARY.encode() not in entries.read_bytes()

    haystacks = project / "data" / "summhay" / "haystacks.parquet"
    assert pq.read_table(haystacks).num_rows >= 1
    bounds = json.loads((project / "data" / "summhay_baselines" / "summhay.json").read_text())
    assert bounds["coverage_bound"]["oracle"] == 100.0

    # the window moves back: every stage comes back from DVC's run cache without running
    params["wiki"]["created_after"] = FIRST_WINDOW[0]
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
    restored = dvc(project, "repro")
    assert "Running stage" not in restored
    for stage in STAGES:
        assert f"Stage '{stage}' is cached - skipping run, checking out outputs" in restored
    assert {p: p.read_bytes() for p in first_bytes} == first_bytes

    # a SummHay setting changes: DVC sees exactly the stages that read the summhay key changed
    # (summhay, and publish, which records it in provenance); the stages after summhay follow
    # its outputs, as the window's change showed (the stage's own tests check what the setting
    # does; it is put back unbuilt)
    params = yaml.safe_load(params_file.read_text())
    before_text = params_file.read_text()
    params["summhay"]["documents"] = 12
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
    status = dvc(project, "status")
    assert set(re.findall(r"^(\w+):\s*$", status, re.M)) == {"summhay", "publish"}, status
    assert re.search(r"modified:\s+summhay$", status, re.M), status
    params_file.write_text(before_text)

    # a reviewer rejects one QA item of the release: only publish re-runs, without it, with an
    # Audit beside the panel's section
    qa_id = pq.read_table(project / "data" / "lveval" / "qa.parquet").column("qa_id")[0].as_py()
    version = params["publish"]["version"]
    line = {"release": version, "dataset": "lveval", "config": "qa", "item": qa_id,
            "reviewer": "ana", "decision": "reject", "reason": "ambiguous question",
            "fields": {}, "at": "2026-12-01T09:00:00Z"}  # fmt: skip
    (project / "reviews" / f"{version}.jsonl").write_text(json.dumps(line) + "\n")
    fourth = dvc(project, "repro")
    assert "Running stage 'publish'" in fourth
    assert not any(f"Running stage '{s}'" in fourth for s in STAGES if s != "publish")
    record = json.loads((project / "data" / "publish" / "lveval" / "release.json").read_text())
    assert not any(qa_id in items for items in record["configs"].values())
    card = (project / "data" / "publish" / "lveval" / "README.md").read_text()
    assert "## Audit" in card and f"| qa | {qa_id} | ana | ambiguous question |" in card
    assert "### Validation by a reference panel" in card
