"""Anthropic's Message Batches, as the batch mode uses them, through the SDK: the
:class:`~pipelines.llm.batch_provider.BatchProvider` of the ``anthropic`` backend.

Built from the API reference (platform.claude.com/docs/en/api/messages/batches, read
2026-11-28): ``POST /v1/messages/batches`` takes ``{"requests": [{"custom_id", "params"}]}``
(at most 100,000 requests and 256 MB), each ``params`` the body a synchronous call sends and
each ``custom_id`` the request's cache key (a sha256 in hex: 64 characters of
``^[a-zA-Z0-9_-]{1,64}$``, as the API requires). ``processing_status`` is ``in_progress``,
``canceling`` or ``ended``; the results (JSONL at ``results_url``, in no particular order) give
each request's ``result.type``: ``succeeded`` (its message), ``errored`` (an error object),
``canceled`` or ``expired`` (never run: left unanswered, so an expired job's are submitted again).

An ended job is named in OpenAI's words for the batch mode: ``cancelled`` when a cancel was
initiated, else ``expired`` when some of its requests expired, else ``completed``.

A Message Batch carries no metadata, so a run stopped between creating a job and recording it
cannot find the job by its digest. The ledger records an intent first (the digest, the number of
requests, the time; :meth:`BatchLedger.intend`); a rerun that finds an intent for the digest it
is about to submit lists the batches created around that time and takes the one, not recorded
and not cancelled, with exactly that many requests. Two or more such batches stop the stage
naming them (cancel the ones that are not this run's and run again); none means the creation
never happened, and the requests are submitted. Whatever is found is checked once more when its
results are read: a result for a request the job was never given stops the stage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from pipelines.errors import LLMError
from pipelines.llm.backends.anthropic_api import (
    AnthropicBackend,
    error_message,
    message_response,
    refuses_schema,
)
from pipelines.llm.backends.base import CallFailed
from pipelines.llm.batch_provider import Intent, LineResults, chunked
from pipelines.llm.records import ChatRequest
from pipelines.llm.settings import LLMSettings
from pipelines.secrets import redact

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What the API accepts as a ``custom_id``."""
MAX_BATCH_BYTES = 250_000_000
"""Under the API's 256 MB per batch, with room for the JSON envelope."""
MAX_REQUESTS = 100_000
UNRUN = frozenset({"canceled", "expired"})
"""Result types of requests the job never ran: left unanswered."""
FIND_SLACK = timedelta(minutes=15)
"""How far from an intent's time a batch may have been created and still be its job (clock
skew and a slow create)."""
TRANSFER_TIMEOUT_S = 600.0
COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")
"""The fields of ``request_counts``; they add up to the batch's number of requests."""


class MessageBatches:
    """Create, find, poll and read Message Batches with the backend's client."""

    fallback_note = "no schema sent instead"

    def __init__(self, backend: AnthropicBackend, settings: LLMSettings):
        self.backend = backend
        self.base_url = backend.base_url
        self.key_env = backend.key_env
        self._sdk = backend.sdk.with_options(max_retries=settings.retries)

    @contextmanager
    def _calling(self, what: str) -> Iterator[None]:
        """Turn the SDK's errors into an :class:`LLMError` naming the endpoint, not the key."""
        import anthropic

        try:
            yield
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
            raise LLMError(
                f"{self.base_url} refused the key for {what} (HTTP {exc.status_code}); "
                f"set {self.key_env}"
            ) from None
        except anthropic.APIStatusError as exc:
            raise LLMError(
                f"{what} failed at {self.base_url}: HTTP {exc.status_code}: {error_message(exc)}"
            ) from None
        except anthropic.APIConnectionError as exc:
            raise LLMError(f"{what} failed at {self.base_url}: {exc.__cause__ or exc}") from None
        except anthropic.AnthropicError as exc:
            raise LLMError(f"{what} failed at {self.base_url}: {redact(str(exc))[:300]}") from None

    def chunks(
        self, requests: Mapping[str, ChatRequest], max_requests: int
    ) -> Iterator[dict[str, dict[str, Any]]]:
        """Batch requests by key, each batch within the API's limits."""
        items = {}
        for key, request in requests.items():
            if not CUSTOM_ID.match(key):
                raise LLMError(f"cache key {key!r} is not a custom_id Message Batches accept")
            items[key] = {"custom_id": key, "params": self.backend.batch_params(request)}
        return chunked(items, min(max_requests, MAX_REQUESTS), MAX_BATCH_BYTES, size=_size)

    def submit(self, chunk: Mapping[str, dict[str, Any]], digest: str) -> Any:
        """Create the batch; the new job (the ledger holds its digest)."""
        with self._calling("creating a message batch"):
            return self._sdk.messages.batches.create(
                requests=list(chunk.values()), timeout=TRANSFER_TIMEOUT_S
            )

    def find(self, digest: str, skip: set[str], intent: Intent | None) -> Any | None:
        """The batch a stopped run created for ``intent`` without recording it: listed within
        :data:`FIND_SLACK` of the intent, not in ``skip``, not cancelled, with the intent's
        number of requests. ``None`` without an intent or a match; :class:`LLMError` when
        several match."""
        if intent is None:
            return None
        at = intent.at if intent.at.tzinfo else intent.at.replace(tzinfo=UTC)
        found = []
        with self._calling("listing message batches"):
            for batch in self._sdk.messages.batches.list(limit=100):
                created = _utc(batch.created_at)
                if created < at - FIND_SLACK:
                    break
                if (
                    created <= at + FIND_SLACK
                    and batch.id not in skip
                    and batch.cancel_initiated_at is None
                    and _total(batch) == intent.requests
                ):
                    found.append(batch)
        if len(found) > 1:
            ids = ", ".join(b.id for b in found)
            raise LLMError(
                f"a run stopped between creating a message batch of {intent.requests} requests "
                f"and recording it, and {len(found)} batches created around "
                f"{at.isoformat(timespec='seconds')} could each be it: {ids}. Cancel the ones "
                "that are not this run's (or all of them, to submit again) and run again"
            )
        return found[0] if found else None

    def retrieve(self, batch_id: str, missing_ok: bool = False) -> Any:
        """The job's current state; ``None`` for an unknown job when ``missing_ok``."""
        import anthropic

        with self._calling(f"polling message batch {batch_id}"):
            try:
                return self._sdk.messages.batches.retrieve(batch_id)
            except anthropic.NotFoundError:
                if missing_ok:
                    return None
                raise

    @staticmethod
    def status(batch: Any) -> str:
        if batch.processing_status == "canceling":
            return "cancelling"
        if batch.processing_status != "ended":
            return str(batch.processing_status)
        if batch.cancel_initiated_at is not None:
            return "cancelled"
        return "expired" if (batch.request_counts.expired or 0) else "completed"

    @staticmethod
    def done(batch: Any) -> int:
        return _total(batch) - (batch.request_counts.processing or 0)

    @staticmethod
    def errors(batch: Any) -> str:
        c = batch.request_counts
        return (
            f"{c.canceled} canceled, {c.expired} expired, {c.errored} errored, "
            f"{c.succeeded} succeeded"
        )

    @staticmethod
    def refuses_schema(reason: str) -> bool:
        return refuses_schema(reason)

    def retry_without(self, reason: str) -> bool:
        return self.backend.drops_temperature(reason)

    def results(self, batch: Any, requests: Mapping[str, ChatRequest | None]) -> LineResults:
        """The succeeded and errored requests of an ended batch, from its results."""
        results = LineResults()
        with self._calling(f"reading the results of message batch {batch.id}"):
            for item in self._sdk.messages.batches.results(batch.id, timeout=TRANSFER_TIMEOUT_S):
                read_result(item, requests, results)
        return results


def read_result(
    item: Any, requests: Mapping[str, ChatRequest | None], results: LineResults
) -> None:
    """Add one results line (an SDK ``MessageBatchIndividualResponse``) to ``results``."""
    key = getattr(item, "custom_id", None)
    if key not in requests:
        results.unknown.append(redact(str(key))[:100])
        return
    result = item.result
    kind = getattr(result, "type", None)
    if kind in UNRUN:
        return
    if kind == "succeeded":
        try:
            results.answers[key] = message_response(result.message, requests[key])
        except CallFailed as exc:
            results.failures[key] = exc.reason
        return
    if kind == "errored":
        error = getattr(getattr(result, "error", None), "error", None)
        code = getattr(error, "type", None) or "error"
        results.failures[key] = redact(f"{code}: {getattr(error, 'message', None)}")[:300]
        return
    results.failures[key] = redact(f"unknown result type {kind!r}")[:300]


def _size(item: dict[str, Any]) -> int:
    return len(json.dumps(item, ensure_ascii=False).encode()) + 1


def _total(batch: Any) -> int:
    counts = batch.request_counts
    return sum(getattr(counts, name) or 0 for name in COUNTS)


def _utc(when: Any) -> datetime:
    if isinstance(when, str):
        when = datetime.fromisoformat(when.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=UTC)
