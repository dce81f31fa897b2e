"""The prompts the cards' baselines were produced with, rendered as chat messages.

A prompt file is Jinja text cut into messages at marker lines ``[system]``, ``[user]`` and
``[assistant]``; its name is its path under this folder without ``.j2`` (``lveval/answer``).
The file is cut at its markers *before* anything is rendered, and each message is rendered on
its own, so a value (a passage, a title, an answer) stays inside its message whatever it holds:
a line ``[system]`` in a fetched page is text of the user message, never a message of its own.
Marker lines are lines of the file itself, outside any Jinja block. The toolkit's LLM layer
renders these same files for its baselines, through :func:`render_roles`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent
"""Where the shipped prompt files are."""

_MARKER = re.compile(r"^\[(system|user|assistant)\][ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """One message of a prompt file, not yet rendered."""

    role: str
    source: str
    """Its template source: the rest of the marker line (empty), then the lines up to the next
    marker."""
    line: int
    """The file line of its marker, where ``source`` starts (1-based)."""


def split_source(source: str) -> tuple[str, list[Block]]:
    """A prompt file's template source cut at its marker lines: the source before the first
    marker, and one block per message."""
    parts = _MARKER.split(source)
    line = parts[0].count("\n") + 1
    blocks = []
    for role, body in zip(parts[1::2], parts[2::2], strict=True):
        blocks.append(Block(role, body, line))
        line += body.count("\n")
    return parts[0], blocks


@lru_cache(maxsize=256)
def _compiled(environment: Any, source: str, line: int, name: str, filename: str | None) -> Any:
    """A block compiled once per source; padded with newlines so that Jinja's line numbers,
    in syntax errors and tracebacks, are the file's (the padding is stripped with the text)."""
    code = environment.compile("\n" * (line - 1) + source, name, filename)
    return environment.template_class.from_code(environment, code, environment.make_globals(None))


def render_roles(
    environment: Any, name: str, variables: Mapping[str, Any]
) -> tuple[str, list[tuple[str, str]]]:
    """Prompt ``name`` (a file of ``environment``'s loader, without ``.j2``) rendered one message
    at a time: the rendered text before the first marker, and ``(role, stripped text)`` per
    message. Raises jinja2's errors (file not found, undefined variable, syntax)."""
    template = f"{name}.j2"
    source, filename, _ = environment.loader.get_source(environment, template)
    before, blocks = split_source(source)

    def render(text: str, line: int) -> str:
        return _compiled(environment, text, line, template, filename).render(**variables).strip()

    head = render(before, 1) if before.strip() else ""  # a comment, say; most files have none
    return head, [(b.role, render(b.source, b.line)) for b in blocks]


@cache
def _environment() -> Any:
    import jinja2  # only rendering needs it

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(FOLDER),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def messages(name: str, variables: Mapping[str, Any]) -> list[dict[str, str]]:
    """Prompt ``name`` rendered with ``variables`` into OpenAI-style chat messages."""
    return [
        {"role": role, "content": body}
        for role, body in render_roles(_environment(), name, variables)[1]
    ]


def text(name: str, variables: Mapping[str, Any]) -> str:
    """The prompt's user message: what a harness sends through its own chat template."""
    found = [m["content"] for m in messages(name, variables) if m["role"] == "user"]
    return "\n\n".join(found)
