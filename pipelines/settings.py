"""``params.yaml`` loaded into one pydantic model with a key per stage (from the stage table) and
the shared sections, with errors that name the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, create_model, model_validator

from builders.releases import Release, check_history
from builders.settings import Strict
from pipelines.dag.table import RENAMED, SECTIONS, STAGES
from pipelines.errors import ParamsError
from pipelines.retrieval.settings import RetrievalSettings


class ParamsBase(Strict):
    """What the whole ``params.yaml`` offers besides its keys."""

    def resolved_retrieval(self) -> RetrievalSettings:
        """``retrieval`` with the dense retriever on the embed stage's encoder unless one is
        named there."""
        r: RetrievalSettings = self.retrieval  # type: ignore[attr-defined]
        model = self.embed.model  # type: ignore[attr-defined]
        return r if r.dense_model else r.model_copy(update={"dense_model": model})

    def releases(self) -> list[Release]:
        """``publish.history``, then the current release (``publish.version``, covering up to
        ``wiki.created_before``)."""
        publish, wiki = self.publish, self.wiki  # type: ignore[attr-defined]
        current = Release(publish.version, wiki.created_before)
        return [h.release() for h in publish.history] + [current]

    @model_validator(mode="after")
    def _history_in_order(self) -> ParamsBase:
        try:
            check_history(self.releases())
        except ValueError as exc:
            raise ValueError(f"publish.history with the current release: {exc}") from None
        return self


def _field(model: type[Strict]) -> tuple[type[Strict], Any]:
    """A key that may be left out when its model has a default for everything."""
    required = any(f.is_required() for f in model.model_fields.values())
    return (model, ...) if required else (model, Field(default_factory=model))


Params = create_model(
    "Params",
    __base__=ParamsBase,
    __doc__="The whole ``params.yaml``: one key per stage, plus the shared sections.",
    **{s.name: _field(s.settings) for s in STAGES.values()},
    **{name: _field(model) for name, model in SECTIONS.items()},
)


def _location(loc: tuple[Any, ...]) -> str:
    return " -> ".join(str(part) for part in loc if not str(part).startswith("function-"))


def format_validation_error(exc: ValidationError, source: Path) -> str:
    """Render pydantic errors as ``params.yaml: [wiki -> min_wrds] Extra inputs ...`` lines."""
    lines = []
    for err in exc.errors():
        where = _location(err["loc"]) or "(top level)"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown key (check the spelling; see README for the settings)"
        elif err["type"] == "missing":
            message = "required key is missing"
        elif "input" in err and err["type"] not in {"value_error", "assertion_error"}:
            message = f"{message} (got {err['input']!r})"
        lines.append(f"{source}: [{where}] {message}")
    return "\n".join(lines)


def load_params(path: Path | str = "params.yaml") -> Any:
    """Read and validate ``params.yaml``; raise :class:`ParamsError` naming the key and file."""
    path = Path(path)
    if not path.is_file():
        raise ParamsError(f"{path}: file not found; run from the project root")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: expected a mapping of stage keys, got {type(data).__name__}")
    if old := [k for k in RENAMED if k in data]:
        raise ParamsError(
            "\n".join(
                f"{path}: [{k}] this key was renamed; its settings now live in {RENAMED[k]}"
                for k in old
            )
        )
    try:
        return Params.model_validate(data, context={"root": path.resolve().parent})
    except ValidationError as exc:
        raise ParamsError(format_validation_error(exc, path)) from None
