"""The backend interface and the two ways a single call can fail.

Both failures redact their reason when they are made (a server may echo the key in an error),
so no reason a backend gives reaches a record, a log line or the stats unredacted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping

from pipelines.llm.records import ChatRequest, ChatResponse
from pipelines.secrets import redact


class TransientError(Exception):
    """Worth retrying: 429, 5xx, a timeout or a lost connection. ``retry_after_s`` if told;
    ``rate_limited`` for a 429 (the server's rate limit, which the pacer answers)."""

    def __init__(
        self, reason: str, retry_after_s: float | None = None, *, rate_limited: bool = False
    ):
        self.reason = redact(reason)
        super().__init__(self.reason)
        self.retry_after_s = retry_after_s
        self.rate_limited = rate_limited


class CallFailed(Exception):
    """This call cannot succeed (rejected request, retries used up); the item is recorded failed."""

    def __init__(self, reason: str):
        self.reason = redact(reason)
        super().__init__(self.reason)


class Backend(ABC):
    """Answers chat requests. Raises TransientError, CallFailed, or LLMError for fatal setups."""

    name: str
    model: str
    cacheable: bool = True
    """Whether answers go to the response cache (not for free, deterministic backends)."""
    fallback: str = ""
    """Set when the server refused a response format and another was used: what and why."""
    on_headers: Callable[[Mapping[str, str]], None] | None = None
    """Set by a client that paces its calls: a backend that can read response headers passes
    every response's (an error's too) here, for their rate-limit headers."""

    @abstractmethod
    def complete(self, request: ChatRequest) -> ChatResponse:
        """One completion for ``request``."""


def estimate_tokens(text: str) -> int:
    """A rough token count (4 tokens per 3 words) where a server reports no usage."""
    return (len(text.split()) * 4 + 2) // 3
