"""The settings reference: one page per ``params.yaml`` key, made from the pydantic models the
stage table names (field, type, default, description, the stages that read it; one sub-table per
nested model). ``pipelines.dag.docs`` writes and checks it."""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from pipelines.dag.table import SECTIONS, SHARED, STAGES

SETTINGS = Path("docs/settings")
HEADER = (
    "<!-- Generated from the settings models by `benchsmith docs --write`; do not edit: change "
    "the model's Field(description=...) and regenerate. A test fails when this page is stale. -->"
)


def models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The pydantic models inside a field's type (``X | None``, ``list[X]``, ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in get_args(annotation):
        yield from models_in(arg)


def type_name(annotation: Any) -> str:
    """A short, readable name of a field's type."""
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin is Literal:
        return " or ".join(json.dumps(a) if isinstance(a, str) else str(a) for a in args)
    if origin in (Union, types.UnionType):
        return " or ".join(type_name(a) for a in args)
    if origin in (list, tuple, set, frozenset):
        return f"list of {type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"map of {type_name(args[0])} to {type_name(args[1])}" if args else "map"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type):
        names = {"StrictInt": "int", "AwareDatetime": "datetime", "PosixPath": "path"}
        return names.get(annotation.__name__, annotation.__name__)
    return str(annotation).replace("typing.", "")


def _value(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return value.as_posix()
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _value(v) for k, v in value.items()}
    return value


def default_text(field: FieldInfo, nested: list[type[BaseModel]]) -> str:
    """The default as ``params.yaml`` would write it (long lists shortened), or ``required``."""
    if field.default is PydanticUndefined and field.default_factory is None:
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel) and nested:
        return "see below"
    value = _value(value)
    if isinstance(value, list) and len(value) > 4:
        shown = json.dumps(value[:3], ensure_ascii=False)[:-1]
        return f"`{shown}, …]` ({len(value)} items)"
    text = json.dumps(value, ensure_ascii=False)
    return f"`{text}`" if len(text) <= 40 else f"`{text[:37]}…`"


def _limits(field: FieldInfo) -> str:
    signs = {Ge: "≥", Gt: ">", Le: "≤", Lt: "<"}
    parts = []
    for item in field.metadata:
        for kind, sign in signs.items():
            if isinstance(item, kind):
                parts.append(f"{sign} {getattr(item, kind.__name__.lower())}")
        if isinstance(item, MinLen):
            parts.append(f"at least {item.min_length} items")
        if isinstance(item, MaxLen):
            parts.append(f"at most {item.max_length} items")
    return f" ({', '.join(parts)})" if parts else ""


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _doc(model: type[BaseModel]) -> str:
    """The model's docstring, as one paragraph."""
    return " ".join((model.__doc__ or "").split()).replace("``", "`")


def readers() -> dict[str, list[tuple[str, str]]]:
    """For every dotted ``params.yaml`` key a stage reads as settings, ``(stage, how)`` pairs:
    its own key, or through a shared value of the table (``through `llm```)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for stage in STAGES.values():
        found.setdefault(stage.name, []).append((stage.name, "its own key"))
        for use in stage.uses:
            for key in SHARED[use].params:
                found.setdefault(key, []).append((stage.name, f"through `{use}`"))
    return found


def provenance(key: str) -> list[str]:
    """Stages that record ``key`` as a whole for their outputs (publish, in the cards)."""
    return [s.name for s in STAGES.values() if key in s.params]


def read_by(key: str, table: dict[str, list[tuple[str, str]]]) -> list[str]:
    """The stages that read ``key``: through the key itself or one of its parents."""
    parts = key.split(".")
    names = [s for i in range(1, len(parts) + 1) for s, _ in table.get(".".join(parts[:i]), [])]
    return list(dict.fromkeys(names))


def _others(key: str, table: dict[str, list[tuple[str, str]]]) -> list[str]:
    """Stages other than the key's own that read part of it, with what and how."""
    notes: dict[str, list[str]] = {}
    for k, pairs in table.items():
        if k.startswith(f"{key}."):
            for stage, how in pairs:
                notes.setdefault(stage, []).append(f"`{k}` {how}")
    return [f"`{s}` ({', '.join(n)})" for s, n in notes.items() if s != key]


def _anchor(key: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "", key.lower().replace(".", ""))


def _table(key: str, model: type[BaseModel], table: dict[str, list[tuple[str, str]]]) -> list[str]:
    """One model's table; its nested models follow as their own sections. The stages that read
    the whole key are named above the table; a field read by more stages names them in an
    *Also read by* column."""
    top = key.split(".")[0].split("[")[0]
    everyone = set(read_by(top, table))
    rows: list[list[str]] = []
    below: list[tuple[str, type[BaseModel]]] = []
    for name, field in model.model_fields.items():
        dotted = f"{key}.{name}"
        nested = list(dict.fromkeys(models_in(field.annotation)))
        kind = type_name(field.annotation)
        for sub in nested:
            kind = kind.replace(sub.__name__, f"[{sub.__name__}](#{_anchor(dotted)})")
        about = field.description or (f"See below: {_doc(nested[0])}" if nested else "")
        description = cell(about + _limits(field))
        more = [
            s
            for s in read_by(dotted.replace(f"[{model.__name__}]", ""), table)
            if s not in everyone
        ]
        stages = ", ".join(f"`{s}`" for s in more)
        rows.append([f"`{name}`", cell(kind), default_text(field, nested), description, stages])
        below += [(dotted, sub) for sub in nested[:1]]
        below += [(f"{dotted}[{sub.__name__}]", sub) for sub in nested[1:]]
    header = ["Field", "Type", "Default", "Description", "Also read by"]
    if not any(row[-1] for row in rows):
        header, rows = header[:-1], [row[:-1] for row in rows]
    lines = ['<div class="settings-table" markdown>', ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", "</div>"]
    for sub_key, sub in below:
        lines += ["", f"## `{sub_key}`", "", f"`{sub.__module__}.{sub.__name__}`: {_doc(sub)}", ""]
        lines += _table(sub_key, sub, table)
    return lines


def settings_page(key: str, model: type[BaseModel]) -> str:
    """The reference page of one ``params.yaml`` key."""
    table = readers()
    lines = [HEADER, "", f"# `{key}`", "", _doc(model), ""]
    stages = ", ".join(f"`{s}`" for s in read_by(key, table))
    what = "the stage's own key" if key in STAGES else "a section shared by several stages"
    about = [f"Model `{model.__module__}.{model.__name__}`, {what}, read by {stages}."]
    if others := _others(key, table):
        about.append(f"Parts of it are also read by {', '.join(others)}.")
    if recorded := provenance(key):
        names = ", ".join(f"`{s}`" for s in recorded)
        about.append(f"{names} records the whole key in its outputs' provenance.")
    lines += [" ".join(about), ""]
    lines += _table(key, model, table)
    return "\n".join(lines) + "\n"


def settings_index() -> str:
    """The settings overview: every key, the model and the stages that read it."""
    table = readers()
    lines = [HEADER, "", "# Settings reference", ""]
    lines += [
        "Every stage is configured by its own key of `params.yaml`; `llm` and `retrieval` are "
        "shared sections. `benchsmith check` validates the file and names any unknown key, "
        "wrong type or missing file. These pages are generated from the pydantic models, so "
        "each setting is described once, in its model's `Field(description=...)`; the "
        "*Read by* column names the stages whose results depend on the setting.",
        "",
        "| Key | Read by | Also read in part by | Model |",
        "|---|---|---|---|",
    ]
    for key, model in keys().items():
        stages = ", ".join(f"`{s}`" for s in read_by(key, table))
        others = "; ".join(_others(key, table)) or "–"
        name = f"`{model.__module__}.{model.__name__}`"
        lines.append(f"| [`{key}`]({key}.md) | {stages} | {others} | {name} |")
    return "\n".join(lines) + "\n"


def keys() -> dict[str, type[BaseModel]]:
    """Every key of ``params.yaml`` and its model, in the table's order."""
    return {**{s.name: s.settings for s in STAGES.values()}, **SECTIONS}
