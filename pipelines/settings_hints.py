"""What a ``params.yaml`` error should say beyond the model's own message: the quoted form of a
value DVC refuses, the environment variable a key belongs in, and the nearest known key to a
misspelt one."""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel

Location = tuple[str | int, ...]

DVC_TAGS = {
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "seq", "map")
}
"""YAML types DVC accepts in params (it refuses dates, sets and binary values)."""
ACCEPTED = "string, number, boolean, null, list or mapping"

ENV_KEYS = {
    "hf_token": "HF_TOKEN",
    "hub_token": "HF_TOKEN",
    "huggingface_token": "HF_TOKEN",
    "hugging_face_hub_token": "HF_TOKEN",
    "google_api_key": "GOOGLE_API_KEY",
    "google_cse_id": "GOOGLE_CSE_ID",
    "cse_id": "GOOGLE_CSE_ID",
    "cx": "GOOGLE_CSE_ID",
    "anthropic_api_key": "ANTHROPIC_API_KEY",
    "brave_api_key": "BRAVE_API_KEY",
    "subscription_token": "BRAVE_API_KEY",
    "serpapi_key": "SERPAPI_KEY",
    "serpapi_api_key": "SERPAPI_KEY",
}
"""Keys that name the environment variable holding them, wherever they are written."""

SECTION_ENVS = {"publish": "HF_TOKEN", "web": "GOOGLE_API_KEY"}
"""Where a generic secret (``api_key``, ``token``...) of a section comes from; elsewhere it is the
model's key (``llm.api_key_env``): the only other key benchsmith uses."""
PROVIDER_ENVS = {"brave": "BRAVE_API_KEY", "serpapi": "SERPAPI_KEY", "google_cse": "GOOGLE_API_KEY"}
"""Where a generic secret under ``web.search.NAME`` comes from."""

_SECRET_NAME = re.compile(r"(?:^|_)(?:api_?key|key|token|secret|password|passwd)$")


def unsupported_values(
    node: yaml.Node | None, at: Location = ()
) -> Iterator[tuple[int, Location, str]]:
    """``(line, key path, message)`` for every value of a composed YAML document that DVC
    refuses, saying what to write instead (an unquoted date becomes a quoted string)."""
    if node is None:
        return
    if node.tag not in DVC_TAGS:
        line = node.start_mark.line + 1
        if node.tag.endswith(":timestamp"):
            quoted = f'{at[-1]}: "{node.value}"' if isinstance(at[-1], str) else f'"{node.value}"'
            yield line, at, f"{node.value} is an unquoted date, which DVC refuses; write {quoted}"
        else:
            kind = node.tag.rsplit(":", 1)[-1]
            yield line, at, f"a {kind} value, which DVC refuses; write a {ACCEPTED}"
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from unsupported_values(value, (*at, key.value))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from unsupported_values(item, (*at, index))


def env_variable(at: Location, llm_key_env: str) -> str | None:
    """The environment variable an unknown key at ``at`` belongs in, when its name says it holds
    a secret; ``llm_key_env`` is the variable ``llm.api_key_env`` names."""
    name = str(at[-1]).lower()
    if name in ENV_KEYS:
        return ENV_KEYS[name]
    if not _SECRET_NAME.search(name):
        return None
    if len(at) > 3 and at[:2] == ("web", "search") and str(at[2]) in PROVIDER_ENVS:
        return PROVIDER_ENVS[str(at[2])]
    return SECTION_ENVS.get(str(at[0]), llm_key_env)


def nearest_key(model: type[BaseModel], at: Location) -> str | None:
    """The known key closest in spelling to the unknown last key of ``at`` (difflib's ratio of
    at least 0.6), among the fields of the model at that level."""
    parent = model_at(model, at[:-1])
    if parent is None or not isinstance(at[-1], str):
        return None
    close = difflib.get_close_matches(at[-1], list(parent.model_fields), n=1)
    return close[0] if close else None


def model_at(model: type[BaseModel], at: Sequence[str | int]) -> type[BaseModel] | None:
    """The settings model reached from ``model`` by field names, list indexes and mapping keys;
    None when ``at`` leads to a plain value or nowhere."""
    current: Any = model
    for part in at:
        current = _step(current, part)
        if current is None:
            return None
    models = [t for t in _members(current) if _is_model(t)]
    return models[0] if len(models) == 1 else None


def _step(annotation: Any, part: str | int) -> Any:
    """The type one step into ``annotation`` (a model's field, a list's item, a mapping's value)."""
    for member in _members(annotation):
        origin = get_origin(member)
        if _is_model(member) and isinstance(part, str) and part in member.model_fields:
            return member.model_fields[part].annotation
        if origin in (list, tuple, Sequence) and isinstance(part, int):
            return get_args(member)[0]
        if origin in (dict, Mapping) and isinstance(part, str):
            return get_args(member)[1]
    return None


def _members(annotation: Any) -> list[Any]:
    """``annotation`` with ``Annotated`` and unions (``X | None``) unwrapped."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _members(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [m for arg in get_args(annotation) for m in _members(arg)]
    return [annotation]


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)
