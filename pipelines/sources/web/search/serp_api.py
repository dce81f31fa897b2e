"""SerpApi's Google Search API, through SerpApi's official Python client (``serpapi``).

Built from SerpApi's documentation (https://serpapi.com/search-api,
https://serpapi.com/api-status-and-error-codes, https://serpapi.com/search-errors) and the
client's source: ``GET {base}/search`` with ``engine=google``, ``q``, ``start`` (0, 10, 20 …),
``lr`` and ``tbs`` (a ``cdr:1,cd_min:…,cd_max:…`` date range); hits are ``organic_results[]``
with ``link``, ``title`` and ``snippet``, and ``serpapi_pagination.next`` says whether another
page exists. Errors are ``{"error": "…"}``: 401 for a bad key, 429 for the hourly throughput or
for an account out of searches. A search Google answered with nothing is a 200 with an
``error`` too, and counts as no hits.

The client sends the key as the ``api_key`` URL parameter, and its HTTPError's text carries
that URL, so every message is redacted. The key comes from ``SERPAPI_KEY`` only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from builders.settings import Strict
from pipelines.retry import RetryPolicy, retry_after_s
from pipelines.sources.web.search.base import (
    SearchError,
    SearchHit,
    SearchProvider,
    SearchUnavailable,
    redact,
    restrict_start,
)
from pipelines.sources.web.search.calls import HitList, Transient, env_key, refusal, with_retries

API_KEY_ENV = "SERPAPI_KEY"
PAGE_SIZE = 10
"""Organic results a Google page holds."""
LAST_START = 90
"""Last page start asked (10 pages)."""
SPENT = ("run out of searches", "searches for the month have run out", "plan searches")
"""Phrases of a 429 from an account out of searches (not a passing throughput limit)."""


class SerpApiSettings(Strict):
    """SerpApi's Google Search API (key: ``SERPAPI_KEY``)."""

    base_url: str = Field(
        "https://serpapi.com", pattern=r"^https?://\S+$", description="The API's base."
    )
    gl: str | None = Field(
        None, pattern=r"^[A-Za-z]{2}$", description="Google country (gl), e.g. 'us'."
    )


class SerpApi(SearchProvider):
    """Google results through SerpApi, a page of 10 at a time, retrying 429 and 5xx."""

    name = "serpapi"
    page_size = PAGE_SIZE
    usd_per_1000 = 15.0
    """Developer plan, $75 for 5,000 searches a month (https://serpapi.com/pricing, read
    2026-11); a page of results is one search."""

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = "https://serpapi.com",
        gl: str | None = None,
        retries: int = 3,
        backoff_s: float = 1.0,
        timeout_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ):
        if not api_key:
            raise SearchUnavailable(f"serpapi needs {API_KEY_ENV} set", provider=self.name)
        import serpapi  # only live runs need it

        self.secrets = (api_key,)
        self.gl = gl
        self.policy = RetryPolicy(retries, backoff_s)
        self._sleep = sleep
        self._clock = clock
        self._client = serpapi.Client(api_key=api_key, timeout=timeout_s)
        self._client.BASE_DOMAIN = base_url.rstrip("/")  # the client's own setting

    @classmethod
    def from_settings(cls, own: SerpApiSettings, *, retries: int) -> SerpApi:
        """Build from ``SERPAPI_KEY`` and ``web.search.serpapi``."""
        return cls(env_key(cls.name, API_KEY_ENV), base_url=own.base_url, gl=own.gl,
                   retries=retries)  # fmt: skip

    def _params(self, query: str, date_restrict: str | None, language: str | None) -> dict:
        params: dict[str, Any] = {"engine": "google", "q": query, "output": "json"}
        if date_restrict:
            today = self._clock().date()
            first = restrict_start(date_restrict, today)
            params["tbs"] = f"cdr:1,cd_min:{first:%m/%d/%Y},cd_max:{today:%m/%d/%Y}"
        if language:
            params["lr"] = language
        if self.gl:
            params["gl"] = self.gl
        return params

    def _page(self, params: dict[str, Any], query: str) -> dict[str, Any]:
        import requests
        import serpapi

        try:
            answer = self._client.search(dict(params))
        except serpapi.HTTPError as exc:
            status = exc.status_code
            detail = redact(str(getattr(exc, "error", "") or exc), self.secrets)
            if status == 429 and any(p in detail.lower() for p in SPENT):
                raise refusal(self.name, query, status, detail, why="quota spent") from None
            if status == -1 or status == 429 or status >= 500:
                response = getattr(exc, "response", None)
                asked = (
                    retry_after_s(response.headers.get("retry-after"))
                    if response is not None
                    else None
                )
                raise Transient(f"HTTP {status}: {detail}", asked) from None
            raise refusal(self.name, query, status, detail) from None
        except (serpapi.SerpApiError, requests.RequestException) as exc:
            raise Transient(redact(f"{type(exc).__name__}: {exc}", self.secrets)) from None
        except ValueError as exc:  # the body was not JSON
            raise SearchError(
                f"serpapi answered query {query!r} with a body that is not JSON: "
                f"{redact(str(exc), self.secrets)}"
            ) from None
        data = getattr(answer, "data", answer)
        if not isinstance(data, dict) or not ({"search_metadata", "error"} & set(data)):
            shape = type(data).__name__ if not isinstance(data, dict) else "an object"
            raise SearchError(
                f"serpapi answered query {query!r} with {shape} that has neither "
                "search_metadata nor error"
            )
        status = (data.get("search_metadata") or {}).get("status")
        if status == "Error":  # a search SerpApi could not finish (proxy timeout, internal)
            raise Transient(f"search status Error: {redact(str(data.get('error')), self.secrets)}")
        return data  # a 200 with an "error" and no organic_results: Google found nothing

    def search(
        self, query: str, *, num: int, date_restrict: str | None = None, language: str | None = None
    ) -> list[SearchHit]:
        """Up to ``num`` hits: pages start at 0, 10, 20 … until ``num`` hits or no next page."""
        found = HitList(query, self.name, num, self._clock())
        params = self._params(query, date_restrict, language)
        for start in range(0, LAST_START + 1, PAGE_SIZE):
            page = with_retries(
                self.name, query, lambda s=start: self._page({**params, "start": s}, query),
                self.policy, self._sleep,
            )  # fmt: skip
            results = page.get("organic_results") or []
            found.add(results, "link", "title", "snippet")
            more = (page.get("serpapi_pagination") or {}).get("next")
            if found.full or not results or not more:
                break
        return found.hits
