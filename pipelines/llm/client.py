"""One client for every model call: cache, retries, a bounded worker pool, validated answers.

A structured question (:class:`Ask`) is rendered from its prompt file, answered from the cache
or the backend, parsed and validated; an unusable answer is re-asked with the reason, up to
``llm.reasks`` times, and then recorded as a failed :class:`Outcome`. One bad answer never stops
a stage; only fatal setups (refused key, unknown model, missing prompt) raise.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from pipelines.failure_ledger import FailureLedger
from pipelines.llm.backends.base import Backend, CallFailed, TransientError
from pipelines.llm.backends.template import Responder, TemplateBackend
from pipelines.llm.batch import applies, ask_in_batches
from pipelines.llm.budget import Budget
from pipelines.llm.cache import ResponseCache
from pipelines.llm.dry_run import active, dry_run_parts
from pipelines.llm.pacing import PACERS, Pacer, Pacers, summary
from pipelines.llm.prompts import PromptLibrary
from pipelines.llm.records import ChatRequest, ChatResponse, Message
from pipelines.llm.settings import LLMSettings
from pipelines.llm.structured import (
    AnswerError,
    Check,
    CheckFailed,
    Limits,
    TextAnswer,
    Unfinished,
    answer_schema,
    fitted,
    limited,
    parse_answer,
    reason_class,
    unfinished_reason,
)
from pipelines.llm.usage import LLMUsage
from pipelines.llm.versions import answer_version
from pipelines.progress import progress_iter
from pipelines.retry import RetryPolicy
from pipelines.secrets import redact

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
REASK_PROMPT = "reask"


@dataclass(frozen=True)
class Ask(Generic[T]):
    """A question: the prompt file, its variables, the answer's schema and an optional rule."""

    prompt: str
    variables: Mapping[str, Any]
    schema: type[T]
    check: Check | None = None
    limits: Limits | None = None
    """Valid values and list sizes this ask knows of, sent with ``response_format:
    json_schema``."""


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """A validated answer, or why there is none. ``asks`` counts the first ask and re-asks."""

    value: T | None
    error: str = ""
    asks: int = 1
    raw: str = field(default="", repr=False)

    @property
    def ok(self) -> bool:
        """Whether a validated answer came back."""
        return self.value is not None


class LLMClient:
    """Ask questions through one backend with a shared cache and accounting."""

    def __init__(
        self,
        settings: LLMSettings,
        backend: Backend,
        *,
        cache: ResponseCache | None = None,
        prompts: PromptLibrary | None = None,
        sleep: Callable[[float], None] = time.sleep,
        pacers: Pacers = PACERS,
    ):
        self.settings = settings
        self.backend = backend
        self.cache = cache
        self.prompts = prompts or PromptLibrary()
        self.usage = LLMUsage()
        self.failures = FailureLedger()
        """Every ask given up in this run, with its reason and last answer."""
        self._sleep = sleep
        self._prompts_used: set[str] = set()
        self.batches: dict[str, list[str]] = {"submitted": [], "resumed": []}
        """Batch API jobs this client submitted or resumed (``llm.mode: batch``)."""
        self.budget: Budget | None = None
        """``llm.max_cost_usd`` checked before every call to a paid (cacheable) backend."""
        if settings.max_cost_usd is not None and backend.cacheable:
            self.budget = Budget(settings, cache, backend.name, backend.model)
        self.endpoint: str | None = getattr(backend, "base_url", None)
        """The server this backend calls (none for the offline ones)."""
        self.pacer: Pacer | None = None
        """The AIMD limit shared by every client of the process calling this endpoint and
        model (``llm.adaptive_concurrency``); ``None``: a fixed pool."""
        if settings.adaptive_concurrency and self.endpoint:
            self.pacer = pacers.get(self.endpoint, backend.model, settings.concurrency)
            self._pace_mark = self.pacer.mark()
            backend.on_headers = self.pacer.read_headers
        self.rate_limited = 0
        """429s this client received."""
        self._count_lock = threading.Lock()

    @classmethod
    def from_settings(
        cls,
        settings: LLMSettings,
        *,
        responders: Mapping[str, Responder] | None = None,
        prompts: PromptLibrary | None = None,
    ) -> LLMClient:
        """The configured backend with the persistent cache; ``responders`` serve ``template``."""
        if (run := active()) is not None:
            # a dry run (benchsmith estimate): counted and priced, nothing sent or cached
            dry, cache = dry_run_parts(settings, responders or {}, run)
            # stand-in answers are not the model's: one call per ask, re-asks are not foreseen
            sync = settings.model_copy(update={"mode": "sync", "max_cost_usd": None, "reasks": 0})
            return cls(sync, dry, cache=cache, prompts=prompts)
        backend: Backend
        if settings.backend == "openai":
            from pipelines.llm.backends.openai_api import OpenAIBackend

            backend = OpenAIBackend(settings)
        elif settings.backend == "anthropic":
            from pipelines.llm.backends.anthropic_api import AnthropicBackend

            backend = AnthropicBackend(settings)
        else:
            backend = TemplateBackend(responders or {}, cacheable=settings.cache_template)
        return cls(settings, backend, cache=ResponseCache(settings.cache), prompts=prompts)

    def request(
        self,
        prompt: str,
        variables: Mapping[str, Any],
        answer: type | None = None,
        limits: Limits | None = None,
        check: Check | None = None,
    ) -> ChatRequest:
        """Render ``prompt`` with ``variables`` and the configured call parameters; a
        structured ``answer`` model goes along as the response format asks. The versions of
        ``answer`` and ``check`` are part of the request's cache key."""
        self._prompts_used.add(prompt)
        s = self.settings
        structured = answer is not None and answer is not TextAnswer
        fmt = s.response_format if structured else "none"
        schema = answer_schema(answer) if fmt == "json_schema" and answer is not None else None
        if schema is not None:
            schema = fitted(limited(schema, limits) if limits else schema, s.max_tokens)
        return self.prompts.render(
            prompt,
            variables,
            temperature=s.temperature,
            max_tokens=s.max_tokens,
            seed=s.seed,
            response_format=fmt,
            schema_name=answer.__name__ if schema is not None and answer is not None else "",
            schema=schema,
            answer_version=answer_version(answer, check),
        )

    def _key(self, request: ChatRequest) -> str:
        return request.cache_key(self.backend.name, self.backend.model)

    def chat(self, request: ChatRequest) -> ChatResponse:
        """One answer from the cache or the backend, retrying transient failures.

        Raises :class:`CallFailed` when the request is refused or retries are used up.
        """
        cache = self.cache if self.backend.cacheable else None
        key = self._key(request)
        if cache is not None and (hit := cache.get(key)) is not None:
            self.usage.add(request.prompt, cache_hits=1)
            return hit
        reserved = self.budget.reserve(request) if self.budget is not None else 0.0
        response = None
        try:
            response = self._complete(request)
        finally:
            if self.budget is not None:
                self.budget.settle(reserved, response)
        if cache is not None:
            cache.put(
                key, response, prompt=request.prompt, backend=self.backend.name,
                model=self.backend.model,
            )  # fmt: skip
        return response

    def _reject(self, request: ChatRequest, reason: str) -> None:
        """Mark ``request``'s cached answer unusable: it is never served again."""
        if self.cache is not None and self.backend.cacheable:
            self.cache.reject(self._key(request), reason)

    def _complete(self, request: ChatRequest) -> ChatResponse:
        """The backend's answer, retrying transient failures; every call is counted."""
        s = self.settings
        policy = RetryPolicy(s.retries, s.backoff_s, s.max_retry_after_s)
        pacer, slept = self.pacer, -1
        for attempt in range(s.retries + 1):
            # adaptive: wait for the endpoint's pause (a 429's Retry-After) and a free place
            slot = pacer.acquire(self._sleep, slept) if pacer is not None else None
            slept = -1
            try:
                response = self.backend.complete(request)
            except TransientError as exc:
                self.usage.add(request.prompt, calls=1)
                wait = policy.wait_s(attempt, exc.retry_after_s)
                if exc.rate_limited:
                    with self._count_lock:
                        self.rate_limited += 1
                if pacer is not None and slot is not None:
                    if exc.rate_limited:  # cut the limit; hold every new call for Retry-After
                        asked = wait if exc.retry_after_s is not None else None
                        slept = pacer.throttled(slot, asked)
                    else:
                        pacer.failed(slot)
                if policy.exhausted(attempt):
                    raise CallFailed(f"{exc.reason} after {attempt + 1} attempts") from None
                if wait is None:
                    raise CallFailed(
                        f"{exc.reason}; server asked to wait {exc.retry_after_s:.0f} s"
                    ) from None
                self.usage.add(request.prompt, retries=1)
                log.debug("%s: %s, retrying in %.1f s", request.prompt, exc.reason, wait)
                self._sleep(wait)
                continue
            except BaseException as exc:
                if pacer is not None and slot is not None:
                    pacer.failed(slot)
                if isinstance(exc, CallFailed):
                    self.usage.add(request.prompt, calls=1)
                raise
            if pacer is not None and slot is not None:
                pacer.succeeded(slot)
            self.usage.add(
                request.prompt,
                calls=1,
                prompt_tokens=response.prompt_tokens,
                completion_tokens=response.completion_tokens,
            )
            return response
        raise AssertionError("unreachable")

    def ask(self, ask: Ask[T]) -> Outcome[T]:
        """A validated answer to ``ask``, re-asking with the reason; a failed Outcome otherwise.

        An answer the model did not finish (``finish_reason`` other than ``stop``) is unusable
        like one that does not parse or fails its check: it is re-asked, and its cached copy is
        never served again. An exception raised while parsing or checking the answer (a bug in
        ``ask.check`` or the schema) fails the item at once, with the exception's type and
        message as the reason.
        """
        first = request = self.request(ask.prompt, ask.variables, ask.schema, ask.limits, ask.check)
        self.usage.add(ask.prompt, asks=1)
        raw, kind = "", ""
        for attempt in range(self.settings.reasks + 1):
            try:
                response = self.chat(request)
            except CallFailed as exc:
                return self._failed(ask, first, f"call_failed: {exc.reason}", attempt + 1, raw)
            raw = response.text
            try:
                if response.finish_reason != "stop":
                    raise Unfinished(unfinished_reason(response))
                value = parse_answer(raw, ask.schema, ask.check)
            except Unfinished as exc:
                error, kind = str(exc), "unfinished"
                self.usage.add(ask.prompt, unfinished=1)
            except CheckFailed as exc:
                error, kind = str(exc), "failed_check"
                self.usage.rejected(ask.prompt, reason_class(error))
                self._reject(request, error)
            except AnswerError as exc:
                error, kind = str(exc), "malformed"
                self.usage.add(ask.prompt, malformed=1)
                self._reject(request, error)
            except Exception as exc:
                # a bug in a check or schema validator, not the model's fault: re-asking won't help
                log.warning("%s: checking the answer raised", ask.prompt, exc_info=True)
                reason = f"check_raised: {type(exc).__name__}: {exc}"
                self._reject(request, reason)
                return self._failed(ask, first, reason, attempt + 1, raw)
            else:
                self.usage.add(ask.prompt, parsed=1)
                return Outcome(value, asks=attempt + 1, raw=raw)
            if attempt < self.settings.reasks:
                self.usage.add(ask.prompt, reasks=1)
                self._prompts_used.add(REASK_PROMPT)
                reask = self.prompts.messages(REASK_PROMPT, {"error": error})
                request = request.followed_by(Message("assistant", raw), *reask)
        reason = f"invalid_answer: {error}"
        return self._failed(ask, first, reason, self.settings.reasks + 1, raw, kind)

    def _failed(
        self,
        ask: Ask[Any],
        request: ChatRequest,
        reason: str,
        asks: int,
        raw: str,
        kind: str = "",
    ) -> Outcome[Any]:
        """The failed Outcome of ``ask``, its reason redacted and its row in the failure
        ledger: every item's error (hence every drop, item row and failure count built from it)
        passes here. ``kind`` is the last answer's fault (``malformed``, ``failed_check``,
        ``unfinished``); a call that failed or a check that raised is its own kind."""
        reason = redact(reason)
        self.usage.fail(ask.prompt, reason)
        self.failures.add(
            key=self._key(request),
            prompt=ask.prompt,
            prompt_digest=request.messages_digest(),
            model=self.backend.model,
            kind=kind or reason.split(":", 1)[0],
            reason=reason,
            attempts=asks,
            raw=redact(raw, patterns=False),
        )
        log.debug("%s failed: %s", ask.prompt, reason)
        return Outcome(None, reason, asks, raw)

    def ask_many(
        self, asks: Iterable[Ask[Any]], description: str = "asking", total: int | None = None
    ) -> Iterator[Outcome[Any]]:
        """Outcomes of ``asks`` in order, ``llm.concurrency`` at a time, streaming; with
        ``llm.mode: batch`` (openai and anthropic backends), all at once through batch jobs."""
        if applies(self):
            yield from ask_in_batches(self, asks, description, self._sleep)
            return
        workers = self.settings.concurrency
        with ThreadPoolExecutor(workers, thread_name_prefix="llm") as pool:
            pending: deque[Future[Outcome[Any]]] = deque()

            def outcomes() -> Iterator[Outcome[Any]]:
                try:
                    for ask in asks:
                        pending.append(pool.submit(self.ask, ask))
                        if len(pending) >= 2 * workers:
                            yield pending.popleft().result()
                    while pending:
                        yield pending.popleft().result()
                finally:
                    for future in pending:
                        future.cancel()

            yield from progress_iter(outcomes(), description, total=total)

    def stats(self) -> dict[str, Any]:
        """The ``llm`` block for the stage's ``stats.json``."""
        s = self.settings
        block = self.usage.to_dict(
            backend=self.backend.name,
            model=self.backend.model,
            # the mode's prices (batch mode: the batch rates), as the budget and estimate use
            input_cost_per_mtok=s.prices()[0],
            output_cost_per_mtok=s.prices()[1],
            prompt_versions={p: self.prompts.digest(p) for p in self._prompts_used},
        )
        block["response_format"] = s.response_format
        if self.backend.fallback:
            block["response_format_fallback"] = self.backend.fallback
        if self.pacer is not None:
            block["concurrency"] = summary(
                self.pacer, self._pace_mark, s.concurrency, self.rate_limited
            )
        elif self.endpoint:
            block["concurrency"] = {
                "adaptive": False, "ceiling": s.concurrency, "rate_limited": self.rate_limited
            }  # fmt: skip
        if s.mode == "batch":
            block["mode"] = s.mode
            block["batches"] = {state: list(ids) for state, ids in self.batches.items()}
        return block
