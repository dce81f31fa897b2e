"""Dry runs: the asks a pipeline would make, counted and priced, none of them sent.

Inside :func:`dry_run`, every client :meth:`LLMClient.from_settings` builds answers from the
response cache where it holds the question (a cache hit, free) and otherwise from the stage's
template responders, so later steps see answers of the right shape and ask what they would ask.
Each answer that is not a cache hit counts as a call: its prompt tokens are counted from the
rendered messages (:class:`TokenCounter`), its completion tokens are the mean of that prompt's
cached answers from the model, or ``max_tokens`` where the cache has none. The cache file is
read, never written; a question the dry run asks twice counts once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.llm.backends.base import Backend
from pipelines.llm.backends.template import Responder, TemplateBackend
from pipelines.llm.cache import ResponseCache
from pipelines.llm.records import ChatRequest, ChatResponse
from pipelines.llm.settings import LLMSettings
from pipelines.llm.tokens import TokenCounter

MEAN = "mean of cached answers"
MAX_TOKENS = "max_tokens"


@dataclass
class DryRun:
    """A dry run's token counter, and where each prompt's completion estimate came from."""

    counter: TokenCounter
    completion_source: dict[str, str] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    """Cache keys of the first requests of asks that failed in the last run (the stages'
    failure ledgers)."""
    retried: set[str] = field(default_factory=set)
    """Those of them this dry run asks again."""


_ACTIVE: ContextVar[DryRun | None] = ContextVar("benchsmith_dry_run", default=None)


@contextmanager
def dry_run(counter: TokenCounter) -> Iterator[DryRun]:
    """Make every client built inside a dry-run client."""
    run = DryRun(counter)
    token = _ACTIVE.set(run)
    try:
        yield run
    finally:
        _ACTIVE.reset(token)


def active() -> DryRun | None:
    """The dry run in progress, if any."""
    return _ACTIVE.get()


class DryRunCache(ResponseCache):
    """The response cache read only, plus the stand-in answers of this dry run kept in memory:
    a question asked twice is counted once, as a run with the cache would count it."""

    def __init__(self, path: Path):
        self._disk = ResponseCache(path) if path.is_file() else None
        self._memo: dict[str, ChatResponse] = {}
        self._lock = threading.Lock()
        self.path = path

    def get(self, key: str) -> ChatResponse | None:
        """The answer of the cache file, or of this dry run."""
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        return self._disk.get(key) if self._disk is not None else None

    def put(self, key: str, response: ChatResponse, **where: str) -> None:
        """Keep a stand-in answer for this dry run only; the file is never written."""
        with self._lock:
            self._memo[key] = ChatResponse(
                response.text, response.prompt_tokens, response.completion_tokens, cached=True
            )

    def reject(self, key: str, reason: str) -> None:
        """Nothing: the file is never written."""

    def mean_completion_tokens(self, backend: str, model: str) -> dict[str, float]:
        """The cache file's mean completion length per prompt."""
        return self._disk.mean_completion_tokens(backend, model) if self._disk else {}


class DryRunBackend(Backend):
    """Stand-in answers under the configured backend's name and model (so cache keys match)."""

    def __init__(
        self,
        settings: LLMSettings,
        responders: Mapping[str, Responder],
        run: DryRun,
        means: Mapping[str, float],
    ):
        self.name = settings.backend
        self.model = settings.model if settings.backend != "template" else "template"
        self.cacheable = settings.backend != "template" or settings.cache_template
        self._answers = TemplateBackend(responders)
        self._run = run
        self._means = dict(means)

    def complete(self, request: ChatRequest) -> ChatResponse:
        key = request.cache_key(self.name, self.model)
        if key in self._run.failed:
            self._run.retried.add(key)
        text = self._answers.complete(request).text
        mean = self._means.get(request.prompt)
        self._run.completion_source[request.prompt] = MAX_TOKENS if mean is None else MEAN
        completion = request.max_tokens if mean is None else min(round(mean), request.max_tokens)
        return ChatResponse(text, self._run.counter.count(request.messages), completion)


def dry_run_parts(
    settings: LLMSettings, responders: Mapping[str, Responder], run: DryRun
) -> tuple[DryRunBackend, DryRunCache]:
    """The backend and cache of a dry-run client for ``settings``."""
    cache = DryRunCache(settings.cache)
    means = cache.mean_completion_tokens(settings.backend, settings.model)
    return DryRunBackend(settings, responders, run, means), cache
