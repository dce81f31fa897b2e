"""Run one stage of the table: check its inputs, gather what it uses, call its run function.

A missing input is reported from the table: the file, what it is, the stage that writes it and
the command to run. The same hint is added to a :class:`MissingInputError` a stage raises about
a path some stage of the table writes; an :class:`EmptyInputError` (the input is there, its stage
ran and produced nothing) gets the stage's name only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines.dag.spec import DATA, Stage
from pipelines.dag.table import SHARED, STAGES, stage_of
from pipelines.errors import EmptyInputError, MissingInputError
from pipelines.stats import StageStats


@dataclass(frozen=True)
class Workspace:
    """Where a run happens: the project root (``params.yaml``'s folder), the settings file and
    the data folder the stages read and write."""

    root: Path
    params_file: Path
    data: Path = DATA

    @classmethod
    def of(cls, params_file: Path) -> Workspace:
        return cls(params_file.resolve().parent, params_file)


def hint(stage: str) -> str:
    """What to run to make an output of ``stage``."""
    return f"run 'dvc repro {stage}' first"


def with_hint(exc: MissingInputError) -> MissingInputError:
    """``exc`` with the stage that writes its path named, when the table knows one; an empty
    input names the stage without asking to run it (it ran)."""
    producer = stage_of(exc.path) if exc.path is not None else None
    if producer is None or "dvc repro" in str(exc):
        return exc
    if isinstance(exc, EmptyInputError):
        return exc.named(producer)
    return MissingInputError(f"{exc}; the {producer} stage writes it: {hint(producer)}", exc.path)


def input_paths(
    stage: Stage, settings: Any, given: dict[str, Path | None], data: Path = DATA
) -> dict[str, Path]:
    """The stage's inputs by keyword: ``given`` ones, else where their stage writes them under
    ``data``; a needed one that is missing raises :class:`MissingInputError` naming its stage."""
    paths: dict[str, Path] = {}
    for item in stage.inputs:
        if not item.name:
            continue
        path = given.get(item.name) or item.under(data)
        if item.is_needed(settings) and not path.exists():
            what = (item.help or item.path).rstrip(".")
            raise MissingInputError(
                f"missing {path} ({what[0].lower()}{what[1:]}); the {item.stage} stage writes "
                f"it: {hint(item.stage)}",
                path,
            )
        paths[item.name] = path
    return paths


def run_stage(
    name: str, params: Any, where: Workspace, *, out: Path | None = None, **given: Path | None
) -> StageStats:
    """Run stage ``name`` with its settings from ``params``; ``given`` overrides input paths."""
    stage = STAGES[name]
    settings = getattr(params, name)
    unknown = set(given) - {i.name for i in stage.inputs if i.name}
    if unknown:
        raise TypeError(f"stage {name} has no inputs named {sorted(unknown)}")
    inputs = input_paths(stage, settings, given, where.data)
    shared = {use: SHARED[use].value(params, where) for use in stage.uses}
    try:
        return stage.function()(settings, out=out or where.data / name, **inputs, **shared)
    except MissingInputError as exc:
        raise with_hint(exc) from None
