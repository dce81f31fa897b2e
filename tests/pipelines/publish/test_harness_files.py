"""The scoring code and harness tasks every export ships: what is written, and that it is the
toolkit's own code (run by real harnesses in test_harness_runs.py)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
import yaml

import benchsmith_scoring
from benchsmith_scoring import harness as hooks
from benchsmith_scoring import prompts
from benchsmith_scoring.lengths import BIN_NAMES
from pipelines.llm.prompts import PromptLibrary
from pipelines.publish.registry import DATASETS

PACKAGE = Path(benchsmith_scoring.__file__).parent
HARNESS_ONLY = {"inspect_ai_tasks.py"}
"""Modules only a harness imports (they need it installed)."""


def task_files(folder: Path) -> dict[str, dict]:
    """The task YAMLs of an lm_eval/ folder, ``!function`` tags read as ``fn:<name>``."""
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        text = re.sub(r"!function '?utils\.(\w+)'?", r"fn:\1", path.read_text("utf-8"))
        out[path.stem] = yaml.safe_load(text)
    return out


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_export_ships_the_toolkits_scoring_code_byte_for_byte(
    name: str, hub_export: Path
) -> None:
    shipped = hub_export / name / "scoring" / "benchsmith_scoring"
    ours = {
        p.relative_to(PACKAGE)
        for p in PACKAGE.rglob("*")
        if p.suffix in (".py", ".j2") and "__pycache__" not in p.parts
    }
    copied = {p.relative_to(shipped) for p in shipped.rglob("*") if p.is_file()}
    assert copied == ours
    assert all((shipped / p).read_bytes() == (PACKAGE / p).read_bytes() for p in ours)


def test_the_shipped_package_imports_only_the_standard_library_at_module_level() -> None:
    for path in PACKAGE.rglob("*.py"):
        if path.name in HARNESS_ONLY:
            continue
        tree = ast.parse(path.read_text("utf-8"))
        for node in tree.body:
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            for module in names:
                top = module.split(".")[0]
                assert top in sys.stdlib_module_names or top == "__future__", (path, module)


def test_lveval_tasks_one_per_level_and_variant_pinned_greedy_and_grouped(
    hub_export: Path,
) -> None:
    folder = hub_export / "lveval" / "lm_eval"
    files = task_files(folder)
    tasks = {k: v for k, v in files.items() if not k.startswith("_")}
    configs = sorted(
        p.name for p in (hub_export / "lveval").iterdir() if p.name.startswith("events_")
    )
    assert sorted(t["dataset_name"] for t in tasks.values()) == configs
    for task in tasks.values():
        assert task["dataset_kwargs"] == {
            "revision": "2026.11.0",
            "prompt": "lveval_prompt",
            "target": "answer",
        }
        assert task["dataset_path"] == "benchsmith-test/lveval"
        assert task["metadata"]["repo"] == "benchsmith-test/lveval"
        assert task["generation_kwargs"]["do_sample"] is False
        assert task["generation_kwargs"]["temperature"] == 0.0
        assert task["process_results"] == "fn:lveval_results"
        assert task["custom_dataset"] == "fn:load"
        listed = {m["metric"]: m["aggregation"] for m in task["metric_list"]}
        assert list(listed)[:2] == ["ak", "ak_code"]
        # per length bin as lm-eval's MRCR task lists them: means, counts summed, and the AUC
        for name in BIN_NAMES:
            assert listed[f"ak_{name}"] == listed[f"ak_code_{name}"] == "mean"
            assert listed[f"count_{name}"] == "fn:total"
        assert listed["ak_auc"] == listed["ak_code_auc"] == "fn:auc"
        assert listed["skipped"] == "mean"  # every row carries its config's count
        assert len(listed) == 2 + 3 * len(BIN_NAMES) + 2 + 1
    groups = {k.lstrip("_"): v for k, v in files.items() if k.startswith("_")}
    assert groups["lveval"]["task"] == [
        "lveval_clean",
        "lveval_cfi",
        "lveval_kpr",
        "lveval_cfi_kpr",
    ]
    members = sorted(
        t for g in ("clean", "cfi", "kpr", "cfi_kpr") for t in groups[f"lveval_{g}"]["task"]
    )
    assert members == sorted(tasks)
    assert all(
        t.endswith("_kpr") and not t.endswith("cfi_kpr") for t in groups["lveval_kpr"]["task"]
    )
    utils = (folder / "utils.py").read_text("utf-8")
    for hook in ("lveval_prompt", "lveval_results", "auc", "total"):
        assert f"    {hook},\n" in utils
    # the loader is told its own export: one process may run several exports' tasks
    assert "def load(**kwargs):" in utils and "_load(export=EXPORT, **kwargs)" in utils
    assert "EXPORT = Path(__file__).resolve().parent.parent" in utils


def test_summhay_gets_an_inspect_task_that_judges_but_no_lm_eval_task(hub_export: Path) -> None:
    folder = hub_export / "summhay"
    assert not (folder / "lm_eval").exists()
    assert "summhay_task('subtopics'" in (folder / "inspect" / "tasks.py").read_text("utf-8")
    assert (
        folder / "scoring" / "benchsmith_scoring" / "prompts" / "summhay" / "judge.j2"
    ).is_file()
    card = (folder / "README.md").read_text("utf-8")
    assert "--model-role grader=<provider>/<model>" in card
    assert "lm-evaluation-harness gets no task for this dataset" in card


def test_the_summarizer_prompt_shows_the_haystack_as_the_subtopics_config_holds_it(
    hub_export: Path,
) -> None:
    import pyarrow.parquet as pq

    row = pq.read_table(next((hub_export / "summhay" / "subtopics").glob("test-*"))).to_pylist()[0]
    variables = {"context": row["context"], "query": row["query"], "bullets": 3}
    (_, user) = PromptLibrary().messages("summhay/summarize", variables)
    assert user.content.startswith("Document 1:\n")
    assert row["context"] in user.content


def test_the_harness_prompt_is_the_one_the_baseline_renders() -> None:
    row = {"context": "### Passage 1\nIt rained.", "question": "What happened?"}
    (message,) = PromptLibrary().messages(
        "lveval/answer", {**row, "qa_id": "q", "length_instruction": ""}
    )
    assert hooks.lveval_prompt(row) == message.content
    assert PromptLibrary().path("lveval/answer") == prompts.FOLDER / "lveval" / "answer.j2"


def test_the_loader_reads_the_export_it_sits_in_and_names_what_is_missing(
    hub_export: Path, tmp_path: Path
) -> None:
    assert (
        hooks.local_export("events_mixup_2k_clean", hub_export / "lveval") == hub_export / "lveval"
    )
    assert hooks.local_export("events_mixup_2k_clean", tmp_path) is None
    if hooks.local_export("events_mixup_2k_clean") is None:
        with pytest.raises(FileNotFoundError, match="events_mixup_2k_clean"):
            hooks.load("events_mixup_2k_clean", revision="2026.11.0")


def test_the_card_says_how_to_run_each_harness(hub_export: Path) -> None:
    card = (hub_export / "lveval" / "README.md").read_text("utf-8")
    evaluate = card.split("## Evaluate", 1)[1].split("\n## ", 1)[0]
    assert "lm_eval run --include_path path/to/folder/lm_eval --tasks lveval" in evaluate
    assert "inspect eval path/to/folder/inspect/tasks.py@events_mixup_2k_clean" in evaluate
    assert "from benchsmith_scoring.lveval import ak_score" in evaluate
    wikigen = (hub_export / "wikigenbench" / "README.md").read_text("utf-8")
    assert "pip install inspect-ai datasets jinja2 bpe-openai rouge-score" in wikigen


def test_the_inspect_tasks_take_a_window_a_tokenizer_and_a_policy(hub_export: Path) -> None:
    text = (hub_export / "lveval" / "inspect" / "tasks.py").read_text("utf-8")
    tree = ast.parse(text)
    tasks = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert tasks
    for node in tasks:
        assert [a.arg for a in node.args.args] == [
            "cutoff", "max_length", "tokenizer", "overlength",
        ]  # fmt: skip
        (call,) = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
        passed = {k.arg: k.value.id for k in call.keywords if isinstance(k.value, ast.Name)}
        assert {k: passed[k] for k in ("max_length", "tokenizer", "overlength")} == {
            "max_length": "max_length",
            "tokenizer": "tokenizer",
            "overlength": "overlength",
        }
    assert "-T max_length=4096 -T tokenizer=cl100k_base" in text
