"""How every live provider asks and what an answer means: one attempt per request, retries on
429, 5xx and connection failures (:class:`~pipelines.retry.RetryPolicy`), and the difference
between a query that failed and a provider that cannot serve any more queries this run.

A provider fails *for good* (:class:`SearchUnavailable`) when its key is missing or refused
(401, 403), when it is gone (410), or when its quota is spent; the provider chain then moves
on to the next provider. Anything else that is not retried fails the one query
(:class:`~pipelines.sources.web.search.base.SearchError`). Every message is redacted with the
provider's secrets before anyone sees it, since servers echo request URLs and keys.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from itertools import count
from typing import Any, TypeVar

import httpx

from pipelines.retry import RetryPolicy, retry_after_s
from pipelines.sources.web.search.base import SearchError, SearchHit, SearchUnavailable, redact

log = logging.getLogger(__name__)

T = TypeVar("T")
DETAIL_CHARS = 300
"""How much of an error body a message quotes."""
FOR_GOOD = (401, 403, 410)
"""Statuses after which a provider cannot serve this run: key missing or refused, API gone."""


class Transient(Exception):
    """An attempt that may succeed when tried again: 429, 5xx, a connection failure."""

    def __init__(self, problem: str, asked_s: float | None = None):
        super().__init__(problem)
        self.problem = problem
        self.asked_s = asked_s


def env_key(provider: str, variable: str) -> str:
    """The key in environment variable ``variable``; :class:`SearchUnavailable` when unset
    (keys are never read from settings)."""
    key = os.environ.get(variable, "")
    if not key:
        raise SearchUnavailable(
            f"{provider} needs {variable} set in the environment (keys are read from the "
            "environment only, never from params.yaml)",
            provider=provider,
        )
    return key


def with_retries(
    provider: str,
    query: str,
    attempt: Callable[[], T],
    policy: RetryPolicy,
    sleep: Callable[[float], None],
) -> T:
    """``attempt()`` until it answers; a :class:`Transient` failure waits as ``policy`` says and
    tries again, and fails the query once the policy gives up."""
    for n in count():
        try:
            return attempt()
        except Transient as exc:
            wait = policy.wait_s(n, exc.asked_s)
            if wait is None:
                raise SearchError(
                    f"{provider} failed for query {query!r} after {n + 1} attempts: {exc.problem}"
                ) from None
            log.warning(
                "%s: %s; retry %d of %d in %.1f s", provider, exc.problem, n + 1, policy.retries,
                wait,
            )  # fmt: skip
            sleep(wait)
    raise AssertionError("unreachable")


def refusal(
    provider: str, query: str, status: int, detail: str, *, why: str | None = None, hint: str = ""
) -> SearchError:
    """The error for an answer that is not retried: :class:`SearchUnavailable` when the provider
    cannot serve this run (``FOR_GOOD`` statuses, or a reason ``why`` such as "quota spent"),
    else a failed query."""
    problem = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
    if why or status in FOR_GOOD:
        why = why or {410: "gone"}.get(status, "key missing or refused")
        return SearchUnavailable(
            f"{provider} cannot serve this run ({why}): {problem}{hint}", provider=provider
        )
    return SearchError(f"{provider} refused query {query!r}: {problem}")


def body_detail(text: str, secrets: Iterable[str]) -> str:
    """The start of an error body, redacted, on one line."""
    return redact(" ".join(text.split())[:DETAIL_CHARS], secrets)


class JsonApi:
    """GET requests to one provider's JSON API through one ``httpx.Client``.

    ``for_good(status, body)`` names why an error answer means the provider cannot serve again
    this run (e.g. "quota spent", rather than a passing rate limit), or returns ``None``.
    """

    def __init__(
        self,
        provider: str,
        *,
        headers: Mapping[str, str],
        secrets: Iterable[str],
        policy: RetryPolicy,
        timeout_s: float = 30.0,
        sleep: Callable[[float], None],
        for_good: Callable[[int, Any], str | None] = lambda status, body: None,
        hint: str = "",
        transport: httpx.BaseTransport | None = None,
    ):
        self.provider = provider
        self.secrets = tuple(s for s in secrets if s)
        self.policy = policy
        self._sleep = sleep
        self._for_good = for_good
        self._hint = hint
        self._client = httpx.Client(
            headers=dict(headers), timeout=timeout_s, transport=transport, follow_redirects=False
        )

    def get(self, url: str, params: Mapping[str, Any], *, query: str) -> dict[str, Any]:
        """The JSON object answered to ``url?params``, retried as :func:`with_retries` says."""
        return with_retries(
            self.provider, query, lambda: self._once(url, params, query), self.policy, self._sleep
        )

    def _once(self, url: str, params: Mapping[str, Any], query: str) -> dict[str, Any]:
        try:
            answer = self._client.get(url, params=dict(params))
        except httpx.HTTPError as exc:
            raise Transient(redact(f"{type(exc).__name__}: {exc}", self.secrets)) from None
        try:
            body = json.loads(answer.text)
        except ValueError:
            body = None
        status = answer.status_code
        if status == 200:
            if not isinstance(body, dict):
                shape = "not JSON" if body is None else f"a JSON {type(body).__name__}"
                raise SearchError(
                    f"{self.provider} answered query {query!r} with {shape} "
                    f"({len(answer.content)} bytes): "
                    f"{body_detail(answer.text, self.secrets)!r}"
                )
            return body
        detail = body_detail(answer.text, self.secrets)
        if why := self._for_good(status, body):
            raise refusal(self.provider, query, status, detail, why=why, hint=self._hint)
        if status == 429 or status >= 500:
            raise Transient(f"HTTP {status}: {detail}", asked_wait_s(answer.headers))
        raise refusal(self.provider, query, status, detail, hint=self._hint)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


def asked_wait_s(headers: Mapping[str, str]) -> float | None:
    """The wait a 429 asks for: Retry-After, else the first (shortest-window) value of
    ``X-RateLimit-Reset`` (seconds until the window resets, as Brave sends it)."""
    asked = retry_after_s(headers.get("retry-after"))
    if asked is None:
        first = (headers.get("x-ratelimit-reset") or "").split(",")[0].strip()
        asked = float(first) if first.isdigit() else None
    return asked


class HitList:
    """The hits of one query as pages arrive: ranked from 1, each URL once, at most ``num``."""

    def __init__(self, query: str, provider: str, num: int, retrieved_at: datetime):
        self.query, self.provider, self.num, self.retrieved_at = query, provider, num, retrieved_at
        self.hits: list[SearchHit] = []
        self._seen: set[str] = set()

    @property
    def full(self) -> bool:
        """Whether ``num`` hits are in."""
        return len(self.hits) >= self.num

    def add(self, items: Iterable[Any], url: str, title: str, snippet: str) -> int:
        """Take the results ``items`` (JSON objects with those field names); return how many
        were new."""
        fresh = 0
        for item in items:
            link = field(item, url) if isinstance(item, Mapping) else ""
            if not link or link in self._seen or self.full:
                continue
            self._seen.add(link)
            fresh += 1
            self.hits.append(SearchHit(
                query=self.query, provider=self.provider, rank=len(self.hits) + 1, url=link,
                title=field(item, title), snippet=field(item, snippet),
                retrieved_at=self.retrieved_at,
            ))  # fmt: skip
        return fresh


def field(item: Mapping[str, Any], name: str) -> str:
    """``item[name]`` as text ('' when missing or not text)."""
    value = item.get(name)
    return value if isinstance(value, str) else ""
