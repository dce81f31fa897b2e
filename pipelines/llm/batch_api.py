"""The OpenAI Files and Batches endpoints, as the batch mode uses them, through the SDK.

A job's input is a JSONL file of ``{"custom_id", "method", "url", "body"}`` lines, each body
built exactly as a synchronous call builds it and each ``custom_id`` the request's cache key.
The job carries the digest of its keys in its ``metadata``, so a run killed between creating
a job and recording it finds the job again by listing. Failures of the endpoints themselves
(after the SDK's retries) stop the stage with an :class:`LLMError` naming the job; the key is
never part of a message, and a line's failure is redacted as it is read (a server may echo the
key in it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from pipelines.errors import LLMError
from pipelines.llm.backends.base import CallFailed
from pipelines.llm.backends.openai_api import OpenAIBackend, chat_response
from pipelines.llm.records import ChatRequest, ChatResponse
from pipelines.llm.settings import LLMSettings
from pipelines.secrets import redact

ENDPOINT = "/v1/chat/completions"
DIGEST_KEY = "benchsmith_digest"
TERMINAL = frozenset({"completed", "expired", "failed", "cancelled"})
UNRUN = frozenset({"batch_expired", "batch_cancelled"})
"""Error codes of lines the job never ran: left unanswered (an expired job's are sent again)."""
MAX_FILE_BYTES = 190_000_000
"""Under the Batch API's 200 MB per input file, with room for the multipart envelope."""
LOOKBACK_S = 30 * 86_400
"""How far back the job list is searched for an unrecorded job (batch files live 30 days)."""
TRANSFER_TIMEOUT_S = 600.0


@dataclass
class LineResults:
    """A job's answers and failed requests, by cache key."""

    answers: dict[str, ChatResponse] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)


def jsonl_line(key: str, body: Mapping[str, Any]) -> bytes:
    """One input line: the request ``body`` under its cache key."""
    line = {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def chunked(
    lines: Mapping[str, bytes], max_requests: int, max_bytes: int = MAX_FILE_BYTES
) -> Iterator[dict[str, bytes]]:
    """Input lines by key, split into files of at most ``max_requests`` lines and
    ``max_bytes`` bytes."""
    chunk: dict[str, bytes] = {}
    size = 0
    for key, line in lines.items():
        if chunk and (len(chunk) >= max_requests or size + len(line) > max_bytes):
            yield chunk
            chunk, size = {}, 0
        chunk[key] = line
        size += len(line)
    if chunk:
        yield chunk


def parse_lines(
    text: str, requests: Mapping[str, ChatRequest | None], results: LineResults
) -> None:
    """Add the answered and failed lines of an output or error file to ``results``; lines
    for keys outside ``requests`` are skipped."""
    for raw in text.splitlines():
        if not raw.strip():
            continue
        item = json.loads(raw)
        key = item.get("custom_id")
        if key not in requests:
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

    def __init__(self, backend: OpenAIBackend, settings: LLMSettings):
        self.base_url = backend.base_url
        self.key_env = backend.key_env
        self.window = settings.batch_completion_window
        self._sdk = backend.sdk.with_options(max_retries=settings.retries)

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

    def submit(self, lines: Iterable[bytes], digest: str) -> Any:
        """Upload the input file and create the job, tagged with ``digest``; the new job."""
        data = b"".join(lines)
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

    def find(self, digest: str, skip: set[str]) -> Any | None:
        """The newest job tagged with ``digest`` that is not in ``skip``, from the job list."""
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
