"""What goes to a backend and what comes back; the cache key is derived from the request."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: str
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """A chat completion request, as the backend sees it.

    ``prompt`` names the prompt file it was rendered from and ``variables`` are the values it was
    rendered with: the ``template`` backend answers from them; the ``openai`` backend sends only
    the messages.
    """

    prompt: str
    messages: tuple[Message, ...]
    variables: Mapping[str, Any] = field(default_factory=dict, compare=False)
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int = 0
    response_format: str = "none"
    """``none``, ``json_object`` or ``json_schema`` (with :attr:`schema`)."""
    schema_name: str = ""
    schema: Mapping[str, Any] | None = field(default=None, compare=False)
    """The answer's JSON schema, sent with ``json_schema``."""
    answer_version: str = ""
    """The version of the answer model and of the ask's check (:mod:`pipelines.llm.versions`):
    part of the key, so changing either asks again."""

    @property
    def json_mode(self) -> bool:
        """Whether the answer is asked for as JSON (``json_object`` or ``json_schema``)."""
        return self.response_format != "none"

    def cache_key(self, backend: str, model: str) -> str:
        """A hash of everything that shapes or judges the answer: backend, model, messages,
        params, seed, the answer's schema when one is sent, and the version of the answer model
        and check that judge it."""
        params: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.response_format == "json_object",
        }
        if self.response_format == "json_schema":
            params["json_schema"] = {"name": self.schema_name, "schema": self.schema}
        payload = {
            "backend": backend,
            "model": model,
            "messages": [[m.role, m.content] for m in self.messages],
            "params": params,
            "seed": self.seed,
        }
        if self.answer_version:
            payload["answer_version"] = self.answer_version
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()

    def messages_digest(self) -> str:
        """The digest of the rendered messages alone (what the prompt said, not how it was
        sent)."""
        blob = json.dumps([[m.role, m.content] for m in self.messages], ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def followed_by(self, *messages: Message) -> ChatRequest:
        """The same request with ``messages`` appended (a re-ask)."""
        return ChatRequest(
            prompt=self.prompt,
            messages=(*self.messages, *messages),
            variables=self.variables,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
            response_format=self.response_format,
            schema_name=self.schema_name,
            schema=self.schema,
            answer_version=self.answer_version,
        )


@dataclass(frozen=True)
class ChatResponse:
    """A backend's answer with its token usage (estimated where the server reports none).

    ``finish_reason`` is why the model stopped, in OpenAI's words: ``stop`` (a finished answer),
    ``length`` (cut at ``max_tokens``), ``content_filter``, or a provider's own word verbatim.
    Only a ``stop`` answer is ever served from the cache."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    finish_reason: str = "stop"
