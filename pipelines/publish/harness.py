"""What every export ships for scoring it: the scorers, and lm-evaluation-harness tasks.

- ``scoring/benchsmith_scoring/``: a copy of :mod:`benchsmith_scoring`, the very code the
  toolkit scores its baselines with, and the prompts the baselines were asked with.
- ``inspect/tasks.py``: one Inspect AI task per task config, scored by the shipped scorers
  (eval.yaml can name only Inspect's built-in ones). Run with
  ``inspect eval <export>/inspect/tasks.py@<config> --model <provider>/<model>``.
- ``lm_eval/``: one task YAML per task config (greedy, pinned to the version tag, scored by
  the shipped scorers through ``process_results``), a group per dataset and per LV-Eval variant,
  and a ``utils.py`` that imports the hooks from ``../scoring``. Run with
  ``lm_eval run --include_path <export>/lm_eval --tasks <group>``.

Both take a model's context window and tokenizer (lm-eval's ``--metadata``, Inspect's ``-T``)
and report scores per length bin with their AUC (:mod:`benchsmith_scoring.lengths`).
"""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

import benchsmith_scoring
from benchsmith_scoring.lengths import BIN_NAMES
from pipelines.publish.export import ExportedConfig
from pipelines.publish.registry import DatasetSpec

SCORING = "scoring"
LM_EVAL = "lm_eval"
INSPECT = "inspect"
PACKAGE = Path(benchsmith_scoring.__file__).resolve().parent
SHIPPED_SUFFIXES = (".py", ".j2")
TASK_VERSION = 1.0
"""lm-eval's task version; raise it when a prompt or a scorer changes what a task scores."""


_SCORING_PATH = (
    "import sys\nfrom pathlib import Path\n\n"
    '_SCORING = str(Path(__file__).resolve().parent.parent / "scoring")\n'
    "if _SCORING not in sys.path:\n    sys.path.insert(0, _SCORING)\n\n"
)
"""The lines a generated hook file starts with: ``../scoring`` on the import path."""


def copy_scorers(out: Path) -> list[Path]:
    """Copy the shipped package into ``out/scoring/``; return the files written."""
    target = out / SCORING / PACKAGE.name
    written = []
    for source in sorted(PACKAGE.rglob("*")):
        if source.suffix not in SHIPPED_SUFFIXES or "__pycache__" in source.parts:
            continue
        destination = target / source.relative_to(PACKAGE)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
        written.append(destination)
    return written


class _Function(str):
    """A hook in ``utils.py``, written as lm-eval's ``!function utils.<name>`` tag."""


class _TaskDumper(yaml.SafeDumper):
    """Writes :class:`_Function` values with their tag."""


_TaskDumper.add_representer(_Function, lambda d, v: d.represent_scalar("!function", f"utils.{v}"))


def task_name(spec: DatasetSpec, config: ExportedConfig) -> str:
    """The lm-eval task of a config: ``<dataset>_<config>``."""
    return f"{spec.name}_{config.name}"


def harness_configs(configs: list[ExportedConfig]) -> list[ExportedConfig]:
    """The configs that get a task: task configs with a harness task and a ``test`` split."""
    return [c for c in configs if c.spec.task and c.spec.harness and "test" in c.splits]


def task_yaml(
    spec: DatasetSpec, config: ExportedConfig, version: str, repo_id: str | None
) -> dict[str, Any]:
    """One task: the shipped prompt and scorer over one config's test split, greedy."""
    harness = config.spec.harness
    if harness is None:
        raise ValueError(f"config {config.name!r} has no harness task")
    metadata: dict[str, Any] = {"version": TASK_VERSION, "config": config.name}
    document: dict[str, Any] = {"task": task_name(spec, config)}
    if repo_id:
        document["dataset_path"] = repo_id
        metadata["repo"] = repo_id
    document |= {
        "dataset_name": config.name,
        "dataset_kwargs": {"revision": version, "prompt": harness.prompt, "target": harness.target},
        "custom_dataset": _Function("load"),
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_text": _Function(harness.prompt),
        "doc_to_target": harness.target,
        "generation_kwargs": {
            "until": [],
            "do_sample": False,
            "temperature": 0.0,
            "max_gen_toks": harness.max_gen_toks,
        },
        "process_results": _Function(harness.results),
        "metric_list": metric_list(harness.metrics),
        "metadata": metadata,
    }
    return document


def metric_list(metrics: tuple[str, ...]) -> list[dict[str, Any]]:
    """A task's metrics: each score's mean, its mean per length bin (``ak_gt_0_le_8k``), the rows
    scored per bin (``count_gt_0_le_8k``, summed) and each score's AUC across the bins
    (``ak_auc``), as lm-eval's MRCR task lists them (a bin no row falls in is not reported);
    and ``skipped``, the rows over the window (:func:`benchsmith_scoring.lengths.row_results`)."""

    def listed(metric: str, aggregation: str | _Function = "mean") -> dict[str, Any]:
        better = metric != "skipped"
        return {"metric": metric, "aggregation": aggregation, "higher_is_better": better}

    return [
        *(listed(m) for m in metrics),
        *(listed(f"{m}_{b}") for b in BIN_NAMES for m in metrics),
        *(listed(f"count_{b}", _Function("total")) for b in BIN_NAMES),
        *(listed(f"{m}_auc", _Function("auc")) for m in metrics),
        listed("skipped"),
    ]


def group_yaml(group: str, tasks: list[str], metrics: tuple[str, ...]) -> dict[str, Any]:
    """A group averaging its tasks' metrics, weighted by their sizes."""
    return {
        "group": group,
        "task": tasks,
        "aggregate_metric_list": [
            {"metric": m, "aggregation": "mean", "weight_by_size": True} for m in metrics
        ],
        "metadata": {"version": TASK_VERSION},
    }


_LOAD = (
    "\n\ndef load(**kwargs):\n"
    '    """This export\'s data (the folder above this file), else the Hub\'s."""\n'
    "    return _load(export=EXPORT, **kwargs)\n"
)
"""``utils.load``: the shipped loader told which export it serves. lm-eval may run several
exports' tasks in one process, where Python imports ``benchsmith_scoring`` once."""


def utils_py(hooks: list[str]) -> str:
    """The ``utils.py`` the task YAMLs name: the hooks, imported from ``../scoring``."""
    names = "".join(f"    {h},\n" for h in sorted(hooks) if h != "load")
    return (
        '"""lm-evaluation-harness hooks of this export: prompts and scorers from ../scoring/, the\n'
        'code the card\'s baselines were scored with. Generated by benchsmith; do not edit."""\n\n'
        f"{_SCORING_PATH}from benchsmith_scoring.harness import (  # noqa: E402\n{names})\n"
        "from benchsmith_scoring.harness import load as _load  # noqa: E402\n\n"
        "EXPORT = Path(__file__).resolve().parent.parent\n" + (_LOAD if "load" in hooks else "")
    )


def write_lm_eval(
    spec: DatasetSpec, configs: list[ExportedConfig], out: Path, version: str, repo_id: str | None
) -> list[str]:
    """Write ``out/lm_eval/`` for the task configs lm-eval can score; return the groups."""
    chosen = [c for c in harness_configs(configs) if c.spec.harness and c.spec.harness.lm_eval]
    if not chosen:
        return []
    folder = out / LM_EVAL
    folder.mkdir(parents=True, exist_ok=True)
    hooks = {"load", "auc", "total"}
    members: dict[str, list[str]] = defaultdict(list)
    metrics: tuple[str, ...] = ()
    for config in chosen:
        document = task_yaml(spec, config, version, repo_id)
        (folder / f"{document['task']}.yaml").write_text(_dump(document), "utf-8")
        harness = config.spec.harness
        assert harness is not None
        hooks |= {harness.prompt, harness.results}
        metrics = metrics or harness.metrics
        if config.group:
            members[f"{spec.name}_{config.group}"].append(document["task"])
    groups = dict(members)
    if len(groups) > 1:
        groups[spec.name] = list(groups)
    else:
        groups[spec.name] = [task_name(spec, c) for c in chosen]
    for group, tasks in groups.items():
        (folder / f"_{group}.yaml").write_text(_dump(group_yaml(group, tasks, metrics)), "utf-8")
    (folder / "utils.py").write_text(utils_py(sorted(hooks)), "utf-8")
    return [spec.name, *(g for g in groups if g != spec.name)]


def _dump(document: dict[str, Any]) -> str:
    header = "# Generated by benchsmith from its dataset registry; do not edit.\n"
    return header + yaml.dump(document, Dumper=_TaskDumper, sort_keys=False, width=100)


def inspect_tasks_py(
    configs: list[ExportedConfig], version: str, repo_id: str | None
) -> str | None:
    """``inspect/tasks.py``: one ``@task`` per task config, built by the shipped module."""
    chosen = harness_configs(configs)
    if not chosen:
        return None
    builders = sorted({c.spec.harness.inspect_task for c in chosen if c.spec.harness})
    lines = [
        '"""Inspect AI tasks of this export, scored by the shipped scorers in ../scoring/ (the\n'
        "code the card's baselines were scored with). Generated by benchsmith; do not edit.\n\n"
        "    inspect eval inspect/tasks.py@<config> --model <provider>/<model>\n"
        "    (-T cutoff=2026-06-30: only items whose event was created after that day;\n"
        "     -T max_length=4096 -T tokenizer=cl100k_base: a model's window, in tokens of that\n"
        "     tokenizer: longer rows are skipped, or cut with -T overlength=truncate)\n"
        '"""\n\n',
        _SCORING_PATH,
        "from benchsmith_scoring.inspect_ai_tasks import (  # noqa: E402\n",
        *(f"    {b},\n" for b in builders),
        ")\nfrom inspect_ai import Task, task  # noqa: E402\n\n",
        f"REPO = {repo_id!r}\nREVISION = {version!r}\n",
        "EXPORT = Path(__file__).resolve().parent.parent\n",
    ]
    for config in chosen:
        harness = config.spec.harness
        assert harness is not None
        name = re.sub(r"\W", "_", config.name)
        extra = "".join(f"    {o}: int | None = None,\n" for o in harness.inspect_options)
        passed = "".join(f", {o}={o}" for o in harness.inspect_options)
        lines.append(
            f"\n\n@task\ndef {name}({_TASK_PARAMETERS}{extra}) -> Task:\n"
            f"    return {harness.inspect_task}({config.name!r}, REPO, REVISION, "
            f"max_tokens={harness.max_gen_toks},\n        cutoff=cutoff, export=EXPORT, "
            f"max_length=max_length, tokenizer=tokenizer, overlength=overlength{passed})\n"
        )
    return "".join(lines)


_TASK_PARAMETERS = (
    "\n    cutoff: str | None = None,\n    max_length: int | None = None,\n"
    '    tokenizer: str | None = None,\n    overlength: str = "skip",\n'
)
"""The ``-T`` options of every generated Inspect task."""


def write_inspect(
    configs: list[ExportedConfig], out: Path, version: str, repo_id: str | None
) -> bool:
    """Write ``out/inspect/tasks.py`` when the dataset has task configs."""
    text = inspect_tasks_py(configs, version, repo_id)
    if text is None:
        return False
    (out / INSPECT).mkdir(parents=True, exist_ok=True)
    (out / INSPECT / "tasks.py").write_text(text, "utf-8")
    return True
