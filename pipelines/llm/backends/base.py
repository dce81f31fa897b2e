"""The backend interface and the two ways a single call can fail."""

from __future__ import annotations

from abc import ABC, abstractmethod

from pipelines.llm.records import ChatRequest, ChatResponse


class TransientError(Exception):
    """Worth retrying: 429, 5xx, a timeout or a lost connection. ``retry_after_s`` if told."""

    def __init__(self, reason: str, retry_after_s: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s


class CallFailed(Exception):
    """This call cannot succeed (rejected request, retries used up); the item is recorded failed."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Backend(ABC):
    """Answers chat requests. Raises TransientError, CallFailed, or LLMError for fatal setups."""

    name: str
    model: str
    cacheable: bool = True
    """Whether answers go to the response cache (not for free, deterministic backends)."""
    fallback: str = ""
    """Set when the server refused a response format and another was used: what and why."""

    @abstractmethod
    def complete(self, request: ChatRequest) -> ChatResponse:
        """One completion for ``request``."""


def estimate_tokens(text: str) -> int:
    """A rough token count (4 tokens per 3 words) where a server reports no usage."""
    return (len(text.split()) * 4 + 2) // 3
