"""``llm.mode: batch``: a step's asks answered through batch jobs, in rounds: OpenAI Batch API
jobs for the ``openai`` backend, Anthropic Message Batches for ``anthropic`` (a
:class:`~pipelines.llm.batch_provider.BatchProvider` each).

Round r runs every unfinished ask through the client's own ``ask`` logic against the cache
only: an answer found there is parsed and checked as usual, and the first request that is not
there (a first ask, or a re-ask built from an invalid answer) is collected. The round's
requests go as one job (split only past the API's size limits); its answers are written to the
response cache under the keys a synchronous call uses, and the next round starts. After at
most ``reasks + 1`` rounds no ask needs a new request, and a final pass asks everything again,
in order, answered from the cache, this run's batch answers counted as calls (with their tokens)
exactly as synchronous calls are. A request that failed in a job (an error file line, a
non-200 line, an ``errored`` result) fails its ask with ``call_failed: <reason>`` and is not
cached. A job whose results name requests it was never given stops the stage naming them, once
the answers it gave for its own are cached.

Every job is recorded in the cache's SQLite file (:class:`BatchLedger`) as soon as it exists
and tagged with the digest of its request keys, so an interrupted run resumes the jobs it
recorded, or finds an unrecorded one by its digest, and never submits the same requests twice
while a job holding them is open. An expired job keeps what it answered and only the rest is
submitted again; a failed or cancelled job stops the stage with its id.

With ``llm.max_cost_usd``, each new job is priced before it is submitted at its worst (every
request's prompt tokens and full ``max_tokens``, at the batch prices) and refused if that could
pass the budget (:meth:`Budget.reserve_job`); its answers are added to the spend as they come.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pipelines.errors import LLMError
from pipelines.failure_ledger import FailureLedger
from pipelines.llm.backends.anthropic_api import AnthropicBackend
from pipelines.llm.backends.base import Backend, CallFailed
from pipelines.llm.backends.openai_api import OpenAIBackend
from pipelines.llm.batch_api import BatchAPI
from pipelines.llm.batch_ledger import BatchLedger
from pipelines.llm.batch_provider import TERMINAL, BatchProvider, LineResults, stray_answers
from pipelines.llm.budget import Budget
from pipelines.llm.cache import ResponseCache
from pipelines.llm.message_batches import MessageBatches
from pipelines.llm.records import ChatRequest, ChatResponse
from pipelines.llm.settings import LLMSettings
from pipelines.llm.usage import LLMUsage
from pipelines.progress import progress_iter

log = logging.getLogger(__name__)


class Client(Protocol):
    """What the batch mode needs of :class:`pipelines.llm.client.LLMClient`."""

    settings: LLMSettings
    backend: Backend
    cache: ResponseCache | None
    usage: LLMUsage
    failures: FailureLedger
    batches: dict[str, list[str]]
    budget: Budget | None

    def ask(self, ask: Any) -> Any: ...


def provider_for(backend: Backend, settings: LLMSettings) -> BatchProvider | None:
    """The batch endpoints of ``backend``'s provider; ``None`` for a backend without them."""
    if isinstance(backend, OpenAIBackend):
        return BatchAPI(backend, settings)
    if isinstance(backend, AnthropicBackend):
        return MessageBatches(backend, settings)
    return None


def applies(client: Client) -> bool:
    """Whether ``client`` asks in batches: batch mode, a backend with batch endpoints
    (``openai``, ``anthropic``) and a cache."""
    if client.settings.mode != "batch" or not isinstance(
        client.backend, OpenAIBackend | AnthropicBackend
    ):
        return False
    if client.cache is None:
        log.warning("llm.mode: batch needs the response cache; asking one call at a time")
        return False
    return True


def ask_in_batches(
    client: Client, asks: Iterable[Any], description: str, sleep: Callable[[float], None]
) -> Iterator[Any]:
    """The Outcomes of ``asks`` in order, their requests answered by batch jobs."""
    items = list(asks)
    run = _BatchRun(client, description, sleep)
    run.answer(items)
    final = run.final_client()
    yield from progress_iter((final.ask(a) for a in items), description, total=len(items))


def digest_of(keys: Iterable[str]) -> str:
    """The digest of a set of request keys: a job's identity across runs."""
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()


class _Pending(BaseException):
    """A request missing from the cache (a BaseException: nothing on the way may catch it)."""

    def __init__(self, key: str, request: ChatRequest):
        super().__init__(key)
        self.key = key
        self.request = request


class _Collector(Backend):
    """Answers with this run's batch answers (an unusable one too, which the cache no longer
    serves, so its re-ask follows); a request missing from both is collected; one a job failed
    fails."""

    def __init__(
        self, backend: Backend, fresh: Mapping[str, ChatResponse], failures: Mapping[str, str]
    ):
        self.name, self.model = backend.name, backend.model
        self.fresh, self.failures = fresh, failures

    def complete(self, request: ChatRequest) -> ChatResponse:
        key = request.cache_key(self.name, self.model)
        if key in self.fresh:
            return self.fresh[key]
        if key in self.failures:
            raise CallFailed(self.failures[key])
        raise _Pending(key, request)


class _Replay(Backend):
    """This run's batch answers as calls, so they are counted as synchronous calls are."""

    def __init__(
        self, backend: Backend, answers: Mapping[str, ChatResponse], failures: Mapping[str, str]
    ):
        self.name, self.model = backend.name, backend.model
        self.answers, self.failures = answers, failures

    def complete(self, request: ChatRequest) -> ChatResponse:
        key = request.cache_key(self.name, self.model)
        if key in self.answers:
            return self.answers[key]
        raise CallFailed(self.failures.get(key, "no batch answered this request"))


class _FreshFirst(ResponseCache):
    """The response cache, missing each of this run's batch answers once (for :class:`_Replay`
    to serve and count); then, and for everything else, the cache itself."""

    def __init__(self, cache: ResponseCache, fresh: Iterable[str]):
        self._cache = cache
        self.path = cache.path
        self._unserved = set(fresh)

    def get(self, key: str) -> ChatResponse | None:
        if key in self._unserved:
            self._unserved.discard(key)
            return None
        return self._cache.get(key)

    def put(
        self, key: str, response: ChatResponse, *, prompt: str, backend: str, model: str
    ) -> None:
        """Nothing: only :class:`_Replay`'s answers reach here, and they are stored already."""

    def __len__(self) -> int:
        return len(self._cache)

    def reject(self, key: str, reason: str) -> None:
        self._cache.reject(key, reason)

    def close(self) -> None:
        self._cache.close()


@dataclass
class _Job:
    """A batch job as last seen, with its requests (cache key to prompt name) and what the
    budget set aside for it (USD)."""

    batch: Any
    prompts: dict[str, str]
    reserved: float = 0.0


class _BatchRun:
    """The rounds of one ``ask_many`` call."""

    def __init__(self, client: Client, description: str, sleep: Callable[[float], None]):
        api = provider_for(client.backend, client.settings)
        assert api is not None and client.cache is not None
        self.client = client
        self.settings = client.settings
        self.backend: Backend = client.backend
        self.cache: ResponseCache = client.cache
        self.description = description
        self.sleep = sleep
        self.api: BatchProvider = api
        self.budget = client.budget
        self.ledger = BatchLedger(self.cache.path)
        self.requests: dict[str, ChatRequest] = {}
        self.fresh: dict[str, ChatResponse] = {}
        self.failures: dict[str, str] = {}
        self.rounds = 0
        self.waited_s = 0.0

    def _twin(self, backend: Backend, cache: ResponseCache, usage: LLMUsage | None) -> Client:
        """The client with another backend and cache (and, if given, usage counters and a
        failure ledger of its own)."""
        twin = copy.copy(self.client)
        twin.backend, twin.cache = backend, cache
        if usage is not None:
            twin.usage, twin.failures = usage, FailureLedger()
        return twin

    def final_client(self) -> Client:
        """The client answering from the cache and this run's jobs; it counts on the client's
        own usage, as synchronous calls would be counted."""
        replay = _Replay(self.backend, self.fresh, self.failures)
        final = self._twin(replay, _FreshFirst(self.cache, self.fresh), None)
        final.budget = None  # the jobs' answers are in the spend already
        return final

    def answer(self, asks: list[Any]) -> None:
        """Run rounds until every ask is answered, failed, or out of re-asks."""
        waiting = list(range(len(asks)))
        for _ in range(self.settings.reasks + 1):
            pending, waiting = self._collect(asks, waiting)
            if not pending:
                return
            self.rounds += 1
            self._answer_round(pending)

    def _collect(
        self, asks: list[Any], indexes: list[int]
    ) -> tuple[dict[str, ChatRequest], list[int]]:
        """The requests the asks at ``indexes`` need next, and the asks that need them."""
        collector = _Collector(self.backend, self.fresh, self.failures)
        shadow = self._twin(collector, self.cache, LLMUsage())
        shadow.budget = None  # the round's job is priced as a whole when it is submitted
        pending: dict[str, ChatRequest] = {}
        waiting: list[int] = []
        for i in indexes:
            try:
                shadow.ask(asks[i])
            except _Pending as missing:
                pending.setdefault(missing.key, missing.request)
                waiting.append(i)
        return pending, waiting

    def _answer_round(self, pending: dict[str, ChatRequest]) -> None:
        """Answer ``pending`` through jobs: resume open ones holding any of it, else submit."""
        self.requests.update(pending)
        remaining = dict(pending)
        while remaining:
            jobs = self._resumable(remaining) or self._submit(remaining)
            self._wait(jobs)
            retry = self._ingest(jobs)
            remaining = {
                key: request
                for key, request in remaining.items()
                if key in retry or (key not in self.fresh and key not in self.failures)
            }

    def _resumable(self, remaining: Mapping[str, ChatRequest]) -> list[_Job]:
        """Recorded open jobs that hold any of ``remaining``, as they are now."""
        jobs = []
        for batch_id, prompts in self.ledger.open_jobs().items():
            if not prompts.keys() & remaining.keys():
                continue
            batch = self.api.retrieve(batch_id, missing_ok=True)
            if batch is None:
                log.warning("recorded batch %s no longer exists; asking again", batch_id)
                self.ledger.close(batch_id, "missing")
                continue
            status = self.api.status(batch)
            log.info("resuming batch %s (%d requests, %s)", batch_id, len(prompts), status)
            self.client.batches["resumed"].append(batch_id)
            jobs.append(_Job(batch, prompts))
        return jobs

    def _submit(self, remaining: Mapping[str, ChatRequest]) -> list[_Job]:
        """One job per chunk of ``remaining``, unless the job list already holds it."""
        known = self.ledger.known()
        jobs = []
        for chunk in self.api.chunks(remaining, self.settings.batch_max_requests):
            digest = digest_of(chunk)
            prompts = {key: remaining[key].prompt for key in chunk}
            reserved = 0.0
            batch = self.api.find(digest, known, self.ledger.intent(digest))
            if batch is not None:
                log.info(
                    "batch %s holds these %d requests already; resuming it", batch.id, len(chunk)
                )
                self.client.batches["resumed"].append(batch.id)
            else:
                if self.budget is not None:
                    reserved = self.budget.reserve_job([remaining[key] for key in chunk])
                self.ledger.intend(digest, len(chunk))
                batch = self.api.submit(chunk, digest)
                self.client.batches["submitted"].append(batch.id)
                log.info("submitted batch %s: %d requests", batch.id, len(chunk))
            self.ledger.record(batch.id, digest, prompts)
            jobs.append(_Job(batch, prompts, reserved))
        return jobs

    def _wait(self, jobs: list[_Job]) -> None:
        """Poll ``jobs`` every ``batch_poll_s`` until all are finished, with a progress bar."""
        total = sum(len(job.prompts) for job in jobs)
        label = f"{self.description}: batch round {self.rounds}"
        for _ in progress_iter(self._polls(jobs), label, total=total):
            pass

    def _polls(self, jobs: list[_Job]) -> Iterator[None]:
        """Yield once per request the jobs report done; return when all jobs are finished."""
        shown = 0
        status = self.api.status
        while True:
            for job in jobs:
                if status(job.batch) not in TERMINAL:
                    before = status(job.batch)
                    job.batch = self.api.retrieve(job.batch.id)
                    if status(job.batch) != before:
                        log.info("batch %s: %s", job.batch.id, status(job.batch))
            done = sum(self.api.done(job.batch) for job in jobs)
            yield from (None for _ in range(done - shown))
            shown = max(shown, done)
            if all(status(job.batch) in TERMINAL for job in jobs):
                return
            if self.waited_s >= self.settings.batch_max_wait_s:
                waiting = ", ".join(
                    f"{job.batch.id} ({status(job.batch)})"
                    for job in jobs
                    if status(job.batch) not in TERMINAL
                )
                raise LLMError(
                    f"batches still running after {self.waited_s:.0f} s "
                    f"(llm.batch_max_wait_s): {waiting}; they are recorded, rerun to resume "
                    "polling them"
                )
            self.sleep(self.settings.batch_poll_s)
            self.waited_s += self.settings.batch_poll_s

    def _ingest(self, jobs: list[_Job]) -> set[str]:
        """Cache the answers of finished ``jobs`` and note their failures; the keys to submit
        again (the rest of an expired job that answered some, refused schemas and other
        parameters the backend leaves out from then on). Stops the
        stage, once every job's answers are cached, when a job failed or was cancelled or
        answered requests it was never given."""
        retry: set[str] = set()
        stopped = []
        for job in jobs:
            batch = job.batch
            status = self.api.status(batch)
            requests = {key: self.requests.get(key) for key in job.prompts}
            results = self.api.results(batch, requests)
            if self.budget is not None:
                self.budget.settle_job(job.reserved, results.answers.values())
                job.reserved = 0.0
            for key, response in results.answers.items():
                self.cache.put(
                    key,
                    response,
                    prompt=job.prompts[key],
                    backend=self.backend.name,
                    model=self.backend.model,
                )
                self.fresh[key] = response
                self.failures.pop(key, None)
            refused = self._schema_refused(results) | {
                key for key, reason in results.failures.items() if self.api.retry_without(reason)
            }
            retry |= refused
            for key, reason in results.failures.items():
                if key not in self.fresh and key not in refused:
                    self.failures[key] = reason
            unanswered = [
                key
                for key in job.prompts
                if key not in self.fresh and key not in self.failures and key not in refused
            ]
            if status == "expired" and results.answers and unanswered:
                log.warning(
                    "batch %s expired after answering %d of %d requests; submitting the rest",
                    batch.id,
                    len(results.answers),
                    len(job.prompts),
                )
                retry |= set(unanswered)
            else:
                for key in unanswered:
                    self.failures[key] = f"batch {batch.id} {status} without an answer"
            self.ledger.close(batch.id, status)
            if status in ("failed", "cancelled"):
                stopped.append(f"batch {batch.id} {status}: {self.api.errors(batch)}")
            if results.unknown:
                stopped.append(stray_answers(batch.id, results.unknown))
        if stopped:
            raise LLMError(
                "; ".join(stopped) + " (answers it gave are cached; a rerun submits the rest)"
            )
        return retry

    def _schema_refused(self, results: LineResults) -> set[str]:
        """Requests refused for their json_schema: sent again without it (json_object for OpenAI,
        no schema for Anthropic), once per run."""
        refused = {
            key: reason
            for key, reason in results.failures.items()
            if self.api.refuses_schema(reason)
            and (request := self.requests.get(key)) is not None
            and request.response_format == "json_schema"
        }
        if not refused or self.backend.fallback:
            return set()
        reason = next(iter(refused.values()))
        self.backend.fallback = f"json_schema refused ({reason}); {self.api.fallback_note}"
        log.warning("%s: %s", self.api.base_url, self.backend.fallback)
        return set(refused)
