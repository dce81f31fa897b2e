"""What the batch mode needs of a provider's batch endpoints, and what both providers share.

Two providers implement :class:`BatchProvider`: OpenAI's Files and Batches endpoints
(:mod:`pipelines.llm.batch_api`) and Anthropic's Message Batches
(:mod:`pipelines.llm.message_batches`). :mod:`pipelines.llm.batch` drives either through the
same rounds, ledger and guarantees; a provider only builds jobs, finds and polls them, reads
their results and says what its job states mean in OpenAI's words (:data:`TERMINAL`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypeVar

from pipelines.llm.records import ChatRequest, ChatResponse

TERMINAL = frozenset({"completed", "expired", "failed", "cancelled"})
"""A finished job's states, as :meth:`BatchProvider.status` names them."""
SHOWN_UNKNOWN = 3
"""Stray ids an error names before it counts the rest."""

T = TypeVar("T")


@dataclass
class LineResults:
    """A job's answers and failed requests, by cache key, and the ids it answered that it was
    never given (in the order met)."""

    answers: dict[str, ChatResponse] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Intent:
    """A job about to be created (:meth:`BatchLedger.intend`): its digest, its number of
    requests and when it was about to be created (UTC)."""

    digest: str
    requests: int
    at: datetime


class BatchProvider(Protocol):
    """A provider's batch endpoints, as :class:`pipelines.llm.batch._BatchRun` uses them."""

    base_url: str
    fallback_note: str
    """What a refused schema is replaced with, for ``stats.json`` (``json_object sent
    instead``)."""

    def chunks(
        self, requests: Mapping[str, ChatRequest], max_requests: int
    ) -> Iterator[dict[str, Any]]:
        """``requests`` as job inputs by cache key, one dict per job within the API's limits."""
        ...

    def submit(self, chunk: Mapping[str, Any], digest: str) -> Any:
        """Create a job of ``chunk`` (one of :meth:`chunks`) whose keys have ``digest``."""
        ...

    def find(self, digest: str, skip: set[str], intent: Intent | None) -> Any | None:
        """A job a stopped run created for ``digest`` but never recorded (not in ``skip``)."""
        ...

    def retrieve(self, batch_id: str, missing_ok: bool = False) -> Any:
        """The job's current state; ``None`` for an unknown job when ``missing_ok``."""
        ...

    def status(self, batch: Any) -> str:
        """The job's state in OpenAI's words (finished ones in :data:`TERMINAL`)."""
        ...

    def done(self, batch: Any) -> int:
        """How many of the job's requests are finished."""
        ...

    def errors(self, batch: Any) -> str:
        """Why a failed or cancelled job stopped, in one line."""
        ...

    def results(self, batch: Any, requests: Mapping[str, ChatRequest | None]) -> LineResults:
        """The answered and failed requests of a finished job; ``requests`` holds every key of
        the job (its request where this run knows it)."""
        ...

    def refuses_schema(self, reason: str) -> bool:
        """Whether a request's failure says the server refused its JSON schema."""
        ...

    def retry_without(self, reason: str) -> bool:
        """Whether a request's failure names a parameter the backend leaves out from now on
        (Anthropic's ``temperature``), so that the request is worth sending again."""
        ...


def chunked(
    items: Mapping[str, T],
    max_requests: int,
    max_bytes: int,
    size: Callable[[T], int] = len,  # type: ignore[assignment]
) -> Iterator[dict[str, T]]:
    """Job inputs by key, split into jobs of at most ``max_requests`` items and ``max_bytes``
    bytes (each item's ``size``)."""
    chunk: dict[str, T] = {}
    total = 0
    for key, item in items.items():
        weight = size(item)
        if chunk and (len(chunk) >= max_requests or total + weight > max_bytes):
            yield chunk
            chunk, total = {}, 0
        chunk[key] = item
        total += weight
    if chunk:
        yield chunk


def stray_answers(batch_id: str, unknown: list[str]) -> str:
    """What to say of a job whose results name requests it was never given."""
    shown = ", ".join(unknown[:SHOWN_UNKNOWN])
    more = f" and {len(unknown) - SHOWN_UNKNOWN} more" if len(unknown) > SHOWN_UNKNOWN else ""
    return (
        f"batch {batch_id} answered {len(unknown)} requests it was never given "
        f"(custom_id {shown}{more})"
    )
