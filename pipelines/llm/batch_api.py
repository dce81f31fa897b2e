"""The OpenAI Files and Batches endpoints, as the batch mode uses them, through the SDK: the
:class:`~pipelines.llm.batch_provider.BatchProvider` of the ``openai`` backend.

A job's input is a JSONL file of ``{"custom_id", "method", "url", "body"}`` lines, each body
built exactly as a synchronous call builds it and each ``custom_id`` the request's cache key.
The job carries the digest of its keys in its ``metadata``, so a run killed between creating
a job and recording it finds the job again by listing. Failures of the endpoints themselves
(after the SDK's retries) stop the stage with an :class:`LLMError` naming the job; the key is
never part of a message, and a line's failure is redacted as it is read (a server may echo the
key in it). A line whose ``custom_id`` is not one of the job's requests is kept aside
(:attr:`LineResults.unknown`): the batch mode stops the stage naming it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

from pipelines.errors import LLMError
from pipelines.llm.backends.base import CallFailed
from pipelines.llm.backends.openai_api import OpenAIBackend, chat_response, refuses_schema
from pipelines.llm.batch_provider import TERMINAL, Intent, LineResults, chunked
from pipelines.llm.records import ChatRequest
from pipelines.llm.settings import LLMSettings
from pipelines.secrets import redact

__all__ = ["TERMINAL", "BatchAPI", "LineResults", "batch_errors", "jsonl_line", "parse_lines"]

ENDPOINT = "/v1/chat/completions"
DIGEST_KEY = "benchsmith_digest"
UNRUN = frozenset({"batch_expired", "batch_cancelled"})
"""Error codes of lines the job never ran: left unanswered (an expired job's are sent again)."""
MAX_FILE_BYTES = 190_000_000
"""Under the Batch API's 200 MB per input file, with room for the multipart envelope."""
LOOKBACK_S = 30 * 86_400
"""How far back the job list is searched for an unrecorded job (batch files live 30 days)."""
TRANSFER_TIMEOUT_S = 600.0


def jsonl_line(key: str, body: Mapping[str, Any]) -> bytes:
    """One input line: the request ``body`` under its cache key."""
    line = {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def parse_lines(
    text: str, requests: Mapping[str, ChatRequest | None], results: LineResults
) -> None:
    """Add the answered and failed lines of an output or error file to ``results``; the ids
    of lines for keys outside ``requests`` go to ``results.unknown``."""
    for raw in text.splitlines():
        if not raw.strip():
            continue
        item = json.loads(raw)
        key = item.get("custom_id")
        if key not in requests:
            results.unknown.append(redact(str(key))[:100])
            continue
        response = item.get("response") or {}
        status = response.get("status_code")
        body = response.get("body")
        if item.get("error"):
            error = item["error"]
            if error.get("code") in UNRUN:
                continue
            reason = f"{error.get('code') or 'error'}: {error.get('message')}"
            results.failures[key] = redact(reason)
        elif status == 200 and isinstance(body, dict):
            try:
                results.answers[key] = chat_response(_reply(body), requests[key])
            except CallFailed as exc:
                results.failures[key] = exc.reason
        elif status in (401, 403):  # no server message: it may quote the key
            results.failures[key] = f"HTTP {status}: the key was refused"
        else:
            results.failures[key] = f"HTTP {status}: {_body_message(body)}"


def _reply(body: dict[str, Any]) -> SimpleNamespace:
    """The fields of a ``chat.completion`` body that :func:`chat_response` reads, without
    building the SDK's models (about 70 µs a line, most of the parsing)."""
    choices = [
        SimpleNamespace(
            message=SimpleNamespace(content=(c.get("message") or {}).get("content")),
            finish_reason=c.get("finish_reason"),
        )
        for c in body.get("choices") or []
    ]
    usage = body.get("usage")
    if isinstance(usage, dict):
        tokens = SimpleNamespace(
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )
        return SimpleNamespace(choices=choices, usage=tokens)
    return SimpleNamespace(choices=choices, usage=None)


def _body_message(body: Any) -> str:
    """The message of an error body, redacted and cut to 300 characters."""
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            error = error.get("message") or error
        return redact(str(body.get("message") or error or body))[:300]
    return redact(str(body))[:300]


class BatchAPI:
    """Upload, create, find, poll and download Batch API jobs with the backend's client."""

    fallback_note = "json_object sent instead"

    def __init__(self, backend: OpenAIBackend, settings: LLMSettings):
        self.backend = backend
        self.base_url = backend.base_url
        self.key_env = backend.key_env
        self.window = settings.batch_completion_window
        self._sdk = backend.sdk.with_options(max_retries=settings.retries)

    def chunks(
        self, requests: Mapping[str, ChatRequest], max_requests: int
    ) -> Iterator[dict[str, bytes]]:
        """Input files' lines by key, each file within the API's limits."""
        lines = {key: jsonl_line(key, self.backend.batch_body(r)) for key, r in requests.items()}
        return chunked(lines, max_requests, MAX_FILE_BYTES)

    @staticmethod
    def status(batch: Any) -> str:
        return str(batch.status)

    @staticmethod
    def done(batch: Any) -> int:
        counts = batch.request_counts
        if counts is None:
            return 0
        return (counts.completed or 0) + (counts.failed or 0)

    @staticmethod
    def errors(batch: Any) -> str:
        return batch_errors(batch)

    @staticmethod
    def refuses_schema(reason: str) -> bool:
        return refuses_schema(reason)

    @staticmethod
    def retry_without(reason: str) -> bool:
        return False

    @contextmanager
    def _calling(self, what: str) -> Iterator[None]:
        """Turn the SDK's errors into an :class:`LLMError` naming the endpoint, not the key."""
        import openai

        try:
            yield
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise LLMError(
                f"{self.base_url} refused the key for {what} (HTTP {exc.status_code}); "
                f"set {self.key_env}"
            ) from None
        except openai.APIStatusError as exc:
            raise LLMError(
                f"{what} failed at {self.base_url}: HTTP {exc.status_code}: {_error_of(exc)}"
            ) from None
        except openai.APIConnectionError as exc:
            raise LLMError(f"{what} failed at {self.base_url}: {exc.__cause__ or exc}") from None

    def submit(self, chunk: Mapping[str, bytes], digest: str) -> Any:
        """Upload the input file and create the job, tagged with ``digest``; the new job."""
        data = b"".join(chunk.values())
        with self._calling("uploading a batch input file"):
            uploaded = self._sdk.files.create(
                file=(f"benchsmith-{digest[:16]}.jsonl", data, "application/jsonl"),
                purpose="batch",
                timeout=TRANSFER_TIMEOUT_S,
            )
        with self._calling("creating a batch"):
            return self._sdk.batches.create(
                input_file_id=uploaded.id,
                endpoint=ENDPOINT,
                completion_window=self.window,
                metadata={DIGEST_KEY: digest},
            )

    def find(self, digest: str, skip: set[str], intent: Intent | None = None) -> Any | None:
        """The newest job tagged with ``digest`` that is not in ``skip``, from the job list
        (the job's metadata names it: ``intent`` is not needed)."""
        since = time.time() - LOOKBACK_S
        with self._calling("listing batches"):
            for batch in self._sdk.batches.list(limit=100):
                if batch.created_at < since:
                    return None
                if (batch.metadata or {}).get(DIGEST_KEY) == digest and batch.id not in skip:
                    return batch
        return None

    def retrieve(self, batch_id: str, missing_ok: bool = False) -> Any:
        """The job's current state; ``None`` for an unknown job when ``missing_ok``."""
        import openai

        with self._calling(f"polling batch {batch_id}"):
            try:
                return self._sdk.batches.retrieve(batch_id)
            except openai.NotFoundError:
                if missing_ok:
                    return None
                raise

    def results(self, batch: Any, requests: Mapping[str, ChatRequest | None]) -> LineResults:
        """The answered and failed lines of a finished job, from its output and error files."""
        results = LineResults()
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                with self._calling(f"downloading file {file_id} of batch {batch.id}"):
                    text = self._sdk.files.content(file_id, timeout=TRANSFER_TIMEOUT_S).text
                parse_lines(text, requests, results)
        return results


def _error_of(exc: Any) -> str:
    body = getattr(exc, "body", None)
    return _body_message(body) if body is not None else redact(str(exc))[:300]


def batch_errors(batch: Any) -> str:
    """The job-level errors a failed job reports, in one line."""
    data = getattr(batch.errors, "data", None) or []
    messages = [f"{e.code or 'error'}: {e.message}" for e in data[:3]]
    return "; ".join(messages) or "no reason given"
