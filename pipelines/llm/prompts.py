"""Prompts are versioned template files, rendered by a function that raises on a missing field.

A prompt file is Jinja text cut into chat messages at marker lines ``[system]``, ``[user]``
and ``[assistant]``; the file is cut before anything is rendered and each message is rendered on
its own (:func:`benchsmith_scoring.prompts.render_roles`), so no value can open a message. Its
name is its path under the prompt folder without ``.j2`` (``summhay/subtopics``). Editing a file
changes the rendered messages, hence the cache keys, so only the calls that use it are asked
again; stages list their prompt folders as DVC deps.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

from benchsmith_scoring.prompts import FOLDER as SHIPPED
from benchsmith_scoring.prompts import render_roles
from pipelines.errors import PromptError
from pipelines.llm.records import ChatRequest, Message

PROMPTS = Path(__file__).resolve().parent.parent / "prompts"
"""The prompt folder shipped with the package (``pipelines/prompts``). Prompts that produce
the cards' baselines live with the scorers every export ships (``SHIPPED``), found second."""


UNCLOSED_HINT = " (each message is rendered on its own: close a Jinja block before the next marker)"


def checked_messages(
    before: str, pairs: Sequence[tuple[str, str]], where: str
) -> tuple[Message, ...]:
    """The rendered text before the first marker and the ``(role, text)`` pairs of prompt file
    ``where`` as messages: nothing before the first marker, no empty message, ``[user]`` last."""
    if before:
        raise PromptError(f"{where}: text before the first [system] or [user] marker")
    messages = tuple(Message(role, body) for role, body in pairs)
    if not messages or messages[-1].role != "user":
        raise PromptError(f"{where}: a prompt needs at least one message and must end with [user]")
    if empty := [m.role for m in messages if not m.content]:
        raise PromptError(f"{where}: empty {empty[0]} message")
    return messages


class PromptLibrary:
    """Load and render the prompt files under ``root``, then under ``shipped``."""

    def __init__(self, root: Path = PROMPTS, shipped: Path = SHIPPED):
        self.root = root
        self.roots = (root, shipped)
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(self.roots),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
        )

    def path(self, name: str) -> Path:
        """The file of prompt ``name`` (under ``root`` when it is in neither folder)."""
        found = [r / f"{name}.j2" for r in self.roots if (r / f"{name}.j2").is_file()]
        return found[0] if found else self.root / f"{name}.j2"

    def digest(self, name: str) -> str:
        """A short hash of the prompt file: its version, reported in stats."""
        try:
            return hashlib.sha256(self.path(name).read_bytes()).hexdigest()[:12]
        except FileNotFoundError:
            raise PromptError(f"{self.path(name)}: prompt file not found") from None

    def render(self, name: str, variables: Mapping[str, Any], **params: Any) -> ChatRequest:
        """Render prompt ``name`` into a request; ``params`` (temperature, ...) go on it."""
        messages = self.messages(name, variables)
        return ChatRequest(prompt=name, messages=messages, variables=variables, **params)

    def messages(self, name: str, variables: Mapping[str, Any]) -> tuple[Message, ...]:
        """Render prompt ``name`` into its chat messages."""
        where = str(self.path(name))
        try:
            before, pairs = render_roles(self._env, name, variables)
        except jinja2.TemplateNotFound:
            raise PromptError(f"{where}: prompt file not found") from None
        except jinja2.UndefinedError as exc:
            raise PromptError(f"{where}: {exc.message} (pass it when rendering)") from None
        except jinja2.TemplateSyntaxError as exc:
            hint = UNCLOSED_HINT if (exc.message or "").startswith("Unexpected end") else ""
            raise PromptError(f"{where}:{exc.lineno}: {exc.message}{hint}") from None
        return checked_messages(before, pairs, where)
