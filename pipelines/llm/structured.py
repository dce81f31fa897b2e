"""Structured answers: find the JSON in a reply, validate it with pydantic, explain what failed.

Small models wrap JSON in prose or code fences, truncate it, or change its shape; the reason a
reply was unusable is what the re-ask tells the model, and what a failed item records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from benchsmith_scoring import replies
from pipelines.failure_ledger import reason_class

__all__ = ["reason_class"]  # re-exported: the usage counters and the client class reasons

T = TypeVar("T", bound=BaseModel)
Check = Callable[[Any], str | None]
"""A rule beyond the schema: returns why a validated answer is unusable, or ``None``."""


class TextAnswer(BaseModel):
    """Asked for when the answer is prose (a document), not JSON: the whole reply, stripped."""

    text: str


class AnswerError(ValueError):
    """A reply that is not usable; the message says why, in words fit for a re-ask."""


class CheckFailed(AnswerError):
    """A reply that parsed and matched the schema but failed the ask's content check."""


class Unfinished(AnswerError):
    """A reply the model did not finish (``finish_reason`` other than ``stop``)."""


def unfinished_reason(response: Any) -> str:
    """Why an unfinished reply (a :class:`ChatResponse`) is unusable, in words fit for a re-ask."""
    finish = response.finish_reason
    if finish == "length":
        return (
            f"the answer was cut at max_tokens ({response.completion_tokens} tokens, "
            "finish_reason length); answer more briefly"
        )
    if finish == "content_filter":
        return "the provider's content filter stopped the answer (finish_reason content_filter)"
    return f"the model did not finish its answer (finish_reason {finish})"


def find_json(text: str) -> Any:
    """The first JSON object or array in ``text`` (bare, in prose, or in a code fence), as the
    shipped harness tasks find it (:func:`benchsmith_scoring.replies.find_json`)."""
    try:
        return replies.find_json(text)
    except replies.NoJSONError as exc:
        raise AnswerError(str(exc)) from None


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def parse_answer(text: str, schema: type[T], check: Check | None = None) -> T:
    """Validate ``text`` against ``schema`` and ``check``; :class:`AnswerError` if unusable.

    A schema with a ``from_reply(text)`` class method reads the reply itself (raising
    :class:`AnswerError`); any other finds the reply's JSON and validates it."""
    if schema is TextAnswer:
        if not text.strip():
            raise AnswerError("the answer is empty")
        answer = schema(text=text.strip())
    elif (reader := getattr(schema, "from_reply", None)) is not None:
        # an answer that reads its own reply (a judge's "Fluency: 4" as the paper's regular
        # expressions read it, or its JSON under a structured response format)
        answer = reader(text)
    else:
        value = find_json(text)
        if isinstance(value, list) and len(schema.model_fields) == 1:
            # a bare list where an object with one list field was asked for
            value = {next(iter(schema.model_fields)): value}
        try:
            answer = schema.model_validate(value)
        except ValidationError as exc:
            raise AnswerError(f"the JSON does not match the format: {_describe(exc)}") from None
    if check is not None and (problem := check(answer)):
        raise CheckFailed(problem)
    return answer


def answer_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of an answer model, as sent with ``response_format: json_schema``.

    Every object is closed (``additionalProperties: false``) in what is sent, so a constrained
    decoder cannot invent keys; validation of the reply is unchanged (extra keys are ignored).
    """
    return _closed(model.model_json_schema())


def _closed(schema: Any) -> Any:
    if isinstance(schema, dict):
        closed = {k: _closed(v) for k, v in schema.items()}
        if closed.get("type") == "object" and "additionalProperties" not in closed:
            closed["additionalProperties"] = False
        return closed
    if isinstance(schema, list):
        return [_closed(v) for v in schema]
    return schema


def is_strict(schema: Any) -> bool:
    """Whether OpenAI's ``strict: true`` accepts ``schema``: every object closed
    (``additionalProperties: false``) with every property required, at any depth."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            properties = schema.get("properties", {})
            closed = schema.get("additionalProperties") is False
            if not closed or set(schema.get("required", [])) != set(properties):
                return False
        return all(is_strict(v) for v in schema.values())
    if isinstance(schema, list):
        return all(is_strict(v) for v in schema)
    return True


@dataclass(frozen=True)
class Limits:
    """What one ask knows about its valid answers, added to the schema it sends, by property
    name at any depth: the allowed values (``enums``, such as the passage ids shown) and how
    many items a list may hold. Validation and checks of the reply do not change."""

    enums: Mapping[str, Sequence[str]] = field(default_factory=dict)
    min_items: Mapping[str, int] = field(default_factory=dict)
    max_items: Mapping[str, int] = field(default_factory=dict)


def limited(schema: Any, limits: Limits) -> Any:
    """``schema`` with ``limits`` applied to the properties they name."""
    if isinstance(schema, list):
        return [limited(v, limits) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: limited(v, limits) for k, v in schema.items()}
    for name, prop in (out.get("properties") or {}).items():
        target = prop.get("items", prop) if prop.get("type") == "array" else prop
        if name in limits.enums and target.get("type") == "string":
            target["enum"] = list(dict.fromkeys(limits.enums[name]))
        if prop.get("type") == "array":
            if name in limits.min_items:
                prop["minItems"] = limits.min_items[name]
            if name in limits.max_items:
                prop["maxItems"] = limits.max_items[name]
    return out


CHARS_PER_TOKEN = 3
"""Characters one completion token is assumed to hold when sizing strings (JSON text averages
nearer four; three leaves room)."""
DEFAULT_MAX_ITEMS = 4
"""``maxItems`` of a list whose ask names no size: worst-case sizing multiplies through it."""
MIN_STRING = 24
"""The shortest ``maxLength`` given to a free string, however many share the budget."""
_SCALAR = 8  # worst-case characters of a number, boolean or null


def fitted(schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """``schema`` sized so a schema-constrained answer ends inside ``max_tokens``.

    References to ``$defs`` are inlined so each place gets its own bounds; a list without
    ``maxItems`` gets :data:`DEFAULT_MAX_ITEMS`; every free string (no enum, no ``maxLength``)
    gets ``minLength`` 1 (a constrained model otherwise answers ``""``) and one shared
    ``maxLength``, chosen so the largest answer the schema allows, keys and punctuation
    included, fits ``max_tokens`` times :data:`CHARS_PER_TOKEN` characters (never below
    :data:`MIN_STRING`). What is validated on return does not change.
    """
    body = _inlined({k: v for k, v in schema.items() if k != "$defs"}, schema.get("$defs", {}))
    _cap_lists(body)
    fixed, free = _worst_case(body)
    budget = max_tokens * CHARS_PER_TOKEN
    length = max(MIN_STRING, (budget - fixed) // free) if free else 0
    return _bounded(body, length)


def _inlined(node: Any, defs: Mapping[str, Any], seen: tuple[str, ...] = ()) -> Any:
    if isinstance(node, list):
        return [_inlined(v, defs, seen) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref", "")
    if ref.startswith("#/$defs/") and (name := ref.removeprefix("#/$defs/")) in defs:
        if name in seen:
            raise ValueError(f"answer schema {name} refers to itself; it cannot be sized")
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _inlined({**defs[name], **rest}, defs, (*seen, name))
    return {k: _inlined(v, defs, seen) for k, v in node.items()}


def _cap_lists(node: Any) -> None:
    if isinstance(node, list):
        for v in node:
            _cap_lists(v)
    elif isinstance(node, dict):
        if node.get("type") == "array":
            node.setdefault("maxItems", max(DEFAULT_MAX_ITEMS, node.get("minItems", 0)))
        for v in node.values():
            _cap_lists(v)


def _free(node: dict[str, Any]) -> bool:
    return node.get("type") == "string" and "enum" not in node and "maxLength" not in node


def _worst_case(node: Any) -> tuple[int, int]:
    """(fixed characters, free strings) of the largest answer ``node`` allows."""
    if not isinstance(node, dict):
        return 0, 0
    if options := node.get("anyOf") or node.get("oneOf"):
        return max((_worst_case(o) for o in options), key=lambda fs: fs[0] + fs[1] * MIN_STRING)
    kind = node.get("type")
    if kind == "object":
        fixed, free = 2, 0
        for key, prop in (node.get("properties") or {}).items():
            f, n = _worst_case(prop)
            fixed, free = fixed + len(key) + 4 + f, free + n
        return fixed, free
    if kind == "array":
        f, n = _worst_case(node.get("items", {}))
        count = node["maxItems"]
        return 2 + count * (f + 1), count * n
    if kind == "string":
        if "enum" in node:
            return 2 + max((len(str(v)) for v in node["enum"]), default=0), 0
        if "maxLength" in node:
            return 2 + node["maxLength"], 0
        return 2, 1
    return _SCALAR, 0


def _bounded(node: Any, length: int) -> Any:
    if isinstance(node, list):
        return [_bounded(v, length) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _bounded(v, length) for k, v in node.items()}
    if _free(out):
        out["maxLength"] = max(length, out.get("minLength", 1))
        out.setdefault("minLength", 1)
    return out
