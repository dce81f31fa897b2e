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
    json_mode: bool = False

    def cache_key(self, backend: str, model: str) -> str:
        """A hash of everything that shapes the answer: backend, model, messages, params, seed."""
        payload = {
            "backend": backend,
            "model": model,
            "messages": [[m.role, m.content] for m in self.messages],
            "params": {
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "json_mode": self.json_mode,
            },
            "seed": self.seed,
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()

    def followed_by(self, *messages: Message) -> ChatRequest:
        """The same request with ``messages`` appended (a re-ask)."""
        return ChatRequest(
            prompt=self.prompt,
            messages=(*self.messages, *messages),
            variables=self.variables,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
            json_mode=self.json_mode,
        )


@dataclass(frozen=True)
class ChatResponse:
    """A backend's answer with its token usage (estimated where the server reports none)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
