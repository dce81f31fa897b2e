"""The prompts the cards' baselines were produced with, rendered as chat messages.

A prompt file is Jinja text split into messages at marker lines ``[system]``, ``[user]`` and
``[assistant]``; its name is its path under this folder without ``.j2`` (``lveval/answer``).
The toolkit's LLM layer renders these same files for its baselines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent
"""Where the shipped prompt files are."""

_MARKER = re.compile(r"^\[(system|user|assistant)\][ \t]*$", re.MULTILINE)


def split_roles(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Rendered prompt text cut at its marker lines: the text before the first marker, and
    ``(role, stripped body)`` per message."""
    parts = _MARKER.split(text)
    pairs = [(role, body.strip()) for role, body in zip(parts[1::2], parts[2::2], strict=True)]
    return parts[0], pairs


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
    text = _environment().get_template(f"{name}.j2").render(**variables)
    return [{"role": role, "content": body} for role, body in split_roles(text)[1]]


def text(name: str, variables: Mapping[str, Any]) -> str:
    """The prompt's user message: what a harness sends through its own chat template."""
    found = [m["content"] for m in messages(name, variables) if m["role"] == "user"]
    return "\n\n".join(found)
