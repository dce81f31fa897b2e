"""eval.yaml: what the Hub and Inspect AI accept, checked by structure and by Inspect's own
``hf/`` loader (in a venv of its own, offline)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from huggingface_hub import DatasetCard

from pipelines.publish.registry import DATASETS
from pipelines.publish.views import article_text, outline_text, summhay_subtopics, wikigen_entries
from tests.support.snapshot import ROOT
from tests.support.venvs import INSPECT_AI, venv_with

TOP_KEYS = {"name", "description", "evaluation_framework", "tasks"}
TASK_KEYS = {"id", "config", "split", "field_spec", "shuffle_choices", "epochs"}
TASK_KEYS |= {"epoch_reducer", "solvers", "scorers"}
FIELD_KEYS = {"input", "target", "choices", "input_image", "metadata"}
"""The Hub documents input, target, choices and input_image; Inspect also reads metadata (and
ignores ``id``: its hf/ loader numbers samples 1..N)."""
SOLVERS = {"prompt_template", "system_message", "user_message", "chain_of_thought"}
SOLVERS |= {"use_tools", "generate", "self_critique", "multiple_choice"}
SCORERS = {"includes", "match", "pattern", "answer", "exact", "f1", "model_graded_qa"}
SCORERS |= {"model_graded_fact", "choice", "math"}
"""Inspect AI 0.3.285's ``HFTask``, ``HFFieldSpec``, ``HFSolver`` and ``HFScorer``."""
DRIVER = ROOT / "tests" / "support" / "inspect_hf.py"
OWNER = "benchsmith-test"
REVISION = "0" * 40


def registration(folder: Path) -> dict[str, Any]:
    """A dataset's eval.yaml."""
    return yaml.safe_load((folder / "eval.yaml").read_text("utf-8"))


def card_splits(folder: Path) -> set[tuple[str, str]]:
    """``(config, split)`` pairs the card's ``configs:`` declares."""
    configs = DatasetCard.load(folder / "README.md").data.to_dict()["configs"]
    return {(c["config_name"], f["split"]) for c in configs for f in c["data_files"]}


def split_table(folder: Path, config: str, split: str) -> pa.Table:
    """All rows of one config's split."""
    return pa.concat_tables(pq.read_table(p) for p in sorted((folder / config).glob(f"{split}-*")))


def read_columns(field_spec: dict[str, Any]) -> list[str]:
    """The columns a field_spec reads."""
    scalars = [v for k, v in field_spec.items() if k != "metadata" and isinstance(v, str)]
    return [v for v in scalars if not v.startswith("literal:")] + field_spec.get("metadata", [])


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_eval_yaml_is_an_inspect_registration(hub_export, name):
    document = registration(hub_export / name)
    assert set(document) <= TOP_KEYS and document["evaluation_framework"] == "inspect-ai"
    ids = [task["id"] for task in document["tasks"]]
    assert len(ids) == len(set(ids)) and not any(re.search(r"[/@]", i) for i in ids)
    for task in document["tasks"]:
        assert set(task) <= TASK_KEYS and set(task["field_spec"]) <= FIELD_KEYS
        assert {s["name"] for s in task["solvers"]} <= SOLVERS
        assert {s["name"] for s in task["scorers"]} <= SCORERS
        assert task["solvers"][-1]["name"] == "generate"


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_eval_yaml_reads_columns_that_exist(hub_export, name):
    folder = hub_export / name
    declared = card_splits(folder)
    for task in registration(folder)["tasks"]:
        assert (task["config"], task["split"]) in declared
        table = split_table(folder, task["config"], task["split"])
        spec = task["field_spec"]
        assert set(read_columns(spec)) <= set(table.column_names), task["id"]
        assert pa.types.is_string(table.schema.field(spec["target"]).type), task["id"]
        template = task["solvers"][0]["args"]["template"]
        assert set(re.findall(r"{(\w+)}", template)) <= {"prompt", *spec.get("metadata", [])}


def test_lveval_tasks_score_the_answer_over_the_context(hub_export):
    tasks = registration(hub_export / "lveval")["tasks"]
    assert [t["config"] for t in tasks] == [t["id"] for t in tasks]
    for task in tasks:
        assert task["field_spec"] == {
            "input": "question",
            "target": "answer",
            "metadata": ["context"],
        }
        assert [s["name"] for s in task["scorers"]] == ["includes", "f1"]


def test_the_description_says_which_metric_yaml_cannot_express(hub_export):
    assert "AK metric" in registration(hub_export / "lveval")["description"]
    assert "citation" in registration(hub_export / "summhay")["description"]
    assert "closed-book" in registration(hub_export / "wikigenbench")["description"]
    for name in DATASETS:
        assert "inspect eval hf/" in (hub_export / name / "README.md").read_text("utf-8")


def test_summhay_rows_carry_the_reference_insights_as_one_string(hub_export):
    table = split_table(hub_export / "summhay", "subtopics", "test").to_pylist()
    for row in table:
        assert row["reference"].splitlines() == [f"- {i['text']}" for i in row["insights"]]
    assert summhay_subtopics(pa.table({"topic_id": pa.array([], pa.string())})).num_rows == 0


def test_wikigen_entries_gain_the_outline_and_the_reference_article():
    sections = [
        {"level": 2, "title": "Impact", "text": ""},
        {"level": 3, "title": "Coast", "text": "Flooding."},
    ]
    table = pa.table(
        {
            "summary": ["A storm."],
            "outline": [["Impact", "Coast"]],
            "sections": pa.array(
                [sections],
                pa.list_(
                    pa.struct([("level", pa.int8()), ("title", pa.string()), ("text", pa.string())])
                ),
            ),
        }
    )
    out = wikigen_entries(table)
    assert out.column_names == ["summary", "outline", "outline_text", "sections", "article"]
    assert outline_text(sections) == "## Impact\n### Coast"
    assert out.column("article").to_pylist() == ["A storm.\n\n## Impact\n\n### Coast\n\nFlooding."]
    assert article_text(None, []) == ""
    assert wikigen_entries(table.slice(0, 0)).num_rows == 0


def fake_hub(root: Path, export: Path) -> Path:
    """A Hub cache under ``root/hf`` holding each dataset's eval.yaml at ``main``, and each export
    folder at ``root/OWNER/NAME`` (``datasets`` loads a local folder before asking the Hub)."""
    for name in DATASETS:
        cache = root / "hf" / "hub" / f"datasets--{OWNER}--{name}"
        (cache / "snapshots" / REVISION).mkdir(parents=True)
        (cache / "refs").mkdir()
        (cache / "refs" / "main").write_text(REVISION)
        (cache / "snapshots" / REVISION / "eval.yaml").write_bytes(
            (export / name / "eval.yaml").read_bytes()
        )
        (root / OWNER).mkdir(exist_ok=True)
        (root / OWNER / name).symlink_to(export / name)
    return root / "hf"


@pytest.mark.integration
def test_inspect_loads_and_runs_every_task_from_the_hub_layout(hub_export, tmp_path):
    bin_dir = venv_with("inspect", INSPECT_AI)
    hf_home = fake_hub(tmp_path, hub_export)
    env = {
        **os.environ,
        "HF_HOME": str(hf_home),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "share"),
    }
    specs = [f"hf/{OWNER}/{name}" for name in sorted(DATASETS)]
    specs.append(f"hf/{OWNER}/lveval/events_mixup_2k_clean")  # the card's one-task form
    done = subprocess.run(
        [str(bin_dir / "python"), "-P", str(DRIVER), str(tmp_path / "logs"), *specs],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    runs = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    expected = [t["id"] for n in sorted(DATASETS) for t in registration(hub_export / n)["tasks"]]
    assert len(runs) == len(expected) + 1
    for run in runs:
        assert run["status"] == "success" and run["samples"] == 1, run
        assert run["scores"], run
    summhay = next(r for r in runs if r["task"].endswith("summhay"))
    assert summhay["scores"]["model_graded_qa"]["accuracy"] == 0.5  # the mock grades "P"
