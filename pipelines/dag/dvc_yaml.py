"""``dvc.yaml`` made from the stage table.

Each stage's dependencies are its inputs (other stages' outputs), the input files its settings
name (``${wiki.dump.path}``, interpolated by DVC; those named in a list, which DVC cannot
interpolate, as ``params.yaml`` names them when this file is written), the prompt files it
renders, other folders it reads, and the import closure of its run function's module; its params
are its own key plus what it uses. Metrics and plots are declared as such (``cache: false``),
never as uncached ``outs``, so DVC's run cache can restore every stage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pipelines.dag.closure import closure
from pipelines.dag.spec import Stage
from pipelines.dag.table import SHARED, STAGES

HEADER = (
    "# Generated from the stage table (pipelines/dag/table.py) by `benchsmith dag --write`;\n"
    "# do not edit: change the table and regenerate. A test fails when this file is stale.\n"
)
PROMPTS = Path("pipelines/prompts")
SHIPPED_PROMPTS = Path("benchsmith_scoring/prompts")
"""Prompts of the cards' baselines, shipped with the scorers in every export."""


def code_deps(stage: Stage, root: Path) -> list[str]:
    """The project files the stage's run function may execute."""
    return [p.as_posix() for p in closure(stage.module, root)]


def prompt_dep(prompt: str, root: Path) -> str:
    """The path of a prompt file or folder, in the toolkit's prompts or the shipped ones."""
    shipped = SHIPPED_PROMPTS / prompt
    return (shipped if (root / shipped).exists() else PROMPTS / prompt).as_posix()


def params_of(stage: Stage) -> list[str]:
    """Its own ``params.yaml`` key, then the keys of what it uses and the other keys it reads."""
    keys = [stage.name, *(k for use in stage.uses for k in SHARED[use].params), *stage.params]
    keys = list(dict.fromkeys(keys))
    # a key inside another listed one (publish.history under publish) is already tracked
    return [k for k in keys if not any(k.startswith(f"{other}.") for other in keys)]


def setting_files(stage: Stage, root: Path) -> list[str]:
    """The files ``stage.setting_files`` finds in ``root/params.yaml`` (relative to ``root``
    when inside it)."""
    params = root / "params.yaml"
    if stage.setting_files is None or not params.is_file():
        return []
    section = (yaml.safe_load(params.read_text("utf-8")) or {}).get(stage.name) or {}
    top = root.resolve()
    settings = stage.settings.model_validate(section, context={"root": top})
    files = [p.resolve() for p in stage.setting_files(settings)]
    return [(p.relative_to(top) if p.is_relative_to(top) else p).as_posix() for p in files]


def stage_entry(stage: Stage, root: Path) -> dict[str, Any]:
    """The ``dvc.yaml`` entry of one stage."""
    folder = stage.out
    deps = [i.under().as_posix() for i in stage.inputs]
    deps += [f"${{{key}}}" for key in stage.files]
    deps += setting_files(stage, root)
    deps += [prompt_dep(p, root) for p in stage.prompts]
    deps += [*stage.data_deps, *code_deps(stage, root)]
    entry: dict[str, Any] = {
        "cmd": f"benchsmith stage {stage.name}",
        "deps": list(dict.fromkeys(deps)),
        "params": params_of(stage),
        "outs": [(folder / o).as_posix() for o in stage.outs],
        "metrics": [{(folder / m).as_posix(): {"cache": False}} for m in stage.metrics],
    }
    if stage.plots:
        entry["plots"] = [{(folder / p.path).as_posix(): {"cache": False}} for p in stage.plots]
    return entry


def dvc_yaml(root: Path) -> str:
    """The whole ``dvc.yaml`` text for the project at ``root``."""
    stages = {s.name: stage_entry(s, root) for s in STAGES.values()}
    plots = [
        {(s.out / p.path).as_posix(): {"title": p.title, "x": p.x, "y": list(p.y)}}
        for s in STAGES.values()
        for p in s.plots
    ]
    body = yaml.safe_dump({"stages": stages, "plots": plots}, sort_keys=False, width=100)
    return HEADER + body
