"""Versions of what judges an answer: the answer model and the ask's check function.

Both are part of every cache key (:attr:`ChatRequest.answer_version`), whatever the response
format, so changing either asks again instead of replaying answers judged by other rules.

- An answer model's version is its JSON schema (field names, types, bounds, descriptions) and
  the source of the code that reads a reply into it: its pydantic validators and serializers,
  and its ``from_reply`` reader where it has one. Two classes of the same shape and code are the
  same version wherever they are defined.
- A check's version is its own source: a function's or lambda's lines, a bound method's
  function, a ``functools.partial``'s function, a callable object's class. Helpers it calls are
  not followed; a check may pin its version with a ``check_version`` attribute instead.

Source that cannot be read (a function built at run time) falls back to its compiled code.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel


def answer_version(schema: type[BaseModel] | None, check: Callable[..., Any] | None) -> str:
    """A short digest of ``schema``'s version and ``check``'s; empty when both are unset."""
    if schema is None and check is None:
        return ""
    parts = (_schema_version(schema) if schema else "", _check_version(check) if check else "")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@functools.cache
def _schema_version(schema: type[BaseModel]) -> str:
    shape = json.dumps(schema.model_json_schema(), sort_keys=True, ensure_ascii=False)
    decorators = schema.__pydantic_decorators__
    readers = [
        decorator.func
        for group in dataclasses.fields(decorators)
        for _, decorator in sorted(getattr(decorators, group.name).items())
    ]
    if (reader := getattr(schema, "from_reply", None)) is not None:
        readers.append(reader)
    return _digest(shape, *(_check_version(f) for f in readers))


def _check_version(check: Callable[..., Any]) -> str:
    pinned = getattr(check, "check_version", None)
    if pinned is not None:
        return f"pinned:{pinned}"
    if isinstance(check, functools.partial):
        return _check_version(check.func)
    target = getattr(check, "__func__", check)  # a bound method's function
    code = getattr(target, "__code__", None)
    if code is not None:
        return _code_version(code)
    return _digest(_source(type(check)))  # a callable object: its class


@functools.cache
def _code_version(code: Any) -> str:
    """The version of a function by its code object (one per definition site, so a closure
    made for every ask is read once)."""
    try:
        return _digest(inspect.getsource(code))
    except Exception:  # no file (built at run time), or lines tokenize cannot cut
        return _digest(code.co_code.hex(), repr(code.co_consts), repr(code.co_names))


def _source(obj: Any) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return getattr(obj, "__qualname__", repr(obj))


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()
