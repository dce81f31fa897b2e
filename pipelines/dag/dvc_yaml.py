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

from benchsmith_scoring.tokens import TokenizerError, TokenizerSpec
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
TEMPLATE_FILES = ("tokenizer_config.json", "chat_template.jinja")
"""Files beside a tokenizer.json that can hold its chat template (benchsmith_scoring.tokens)."""


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


def tokenizer_deps(stage: Stage, root: Path) -> list[str]:
    """The tokenizer files the stage's tokenizer settings name in ``root/params.yaml``: each
    tokenizer.json, and its chat template files where they are (relative to ``root``)."""
    params_file = root / "params.yaml"
    params = yaml.safe_load(params_file.read_text("utf-8")) if params_file.is_file() else {}
    deps: list[str] = []
    for key in stage.tokenizers:
        value: Any = params
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        for spec in [value] if isinstance(value, str) else value or []:
            try:
                path = TokenizerSpec.parse(str(spec)).path
            except TokenizerError:
                continue  # benchsmith check names it
            if path is not None:
                beside = [path.parent / name for name in TEMPLATE_FILES]
                deps += [path.as_posix(), *(p.as_posix() for p in beside if (root / p).is_file())]
    return deps


def stage_entry(stage: Stage, root: Path) -> dict[str, Any]:
    """The ``dvc.yaml`` entry of one stage."""
    folder = stage.out
    deps = [i.under().as_posix() for i in stage.inputs]
    deps += [f"${{{key}}}" for key in stage.files]
    deps += tokenizer_deps(stage, root)
    deps += [prompt_dep(p, root) for p in stage.prompts]
    deps += [*stage.data_deps, *code_deps(stage, root)]
    entry: dict[str, Any] = {
        "cmd": f"benchsmith stage {stage.name}",
        "deps": list(dict.fromkeys(deps)),
        "params": params_of(stage),
        "outs": [(folder / o).as_posix() for o in stage.data_outs],
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
