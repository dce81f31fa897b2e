"""Brave Search API, web search: an independent web index with a plain, documented JSON API
that anyone can sign up for (keys at https://api-dashboard.search.brave.com).

Built from Brave's documentation (https://api-dashboard.search.brave.com/app/documentation/
web-search/get-started, .../query, .../responses): ``GET {base}/web/search`` with the key in
the ``X-Subscription-Token`` header; ``count`` results a page (at most 20) and ``offset`` in
pages (at most 9); ``freshness`` as ``pd``/``pw``/``pm``/``py`` or
``YYYY-MM-DDtoYYYY-MM-DD``; ``search_lang`` a language code. Hits are the ``results`` of
``web``, with ``url``, ``title`` and ``description``; ``query.more_results_available`` says
whether another page exists. Errors are
``{"type": "ErrorResponse", "error": {"status", "code", "detail"}}``. The key comes from
``BRAVE_API_KEY`` only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
from pydantic import Field

from builders.settings import Strict
from pipelines.retry import RetryPolicy
from pipelines.sources.web.search.base import (
    SearchHit,
    SearchProvider,
    SearchUnavailable,
    language_code,
    restrict_start,
)
from pipelines.sources.web.search.calls import HitList, JsonApi, env_key

API_KEY_ENV = "BRAVE_API_KEY"
PAGE_SIZE = 20
"""Most results a page (``count``)."""
LAST_OFFSET = 9
"""Last page (``offset`` counts pages from 0)."""
FRESHNESS = {"d1": "pd", "w1": "pw", "m1": "pm", "y1": "py"}
"""dateRestrict values with a Brave shorthand; others become a date range."""
SPENT_CODES = ("QUOTA_LIMITED", "USAGE_LIMIT_EXCEEDED")
"""Error codes (on a 429) of a spent monthly quota rather than the per-second RATE_LIMITED."""
KEY_CODES = ("SUBSCRIPTION_TOKEN_INVALID", "SUBSCRIPTION_NOT_FOUND")
"""Error codes (Brave answers 422) of a missing or refused key."""
LANGUAGES = {"zh-cn": "zh-hans", "zh-tw": "zh-hant", "pt": "pt-pt"}
"""Google lr codes that Brave spells differently."""


def error_codes(body: Any) -> list[str]:
    """The ``code`` of each error in Brave's error body (``error``, or ``errors[]`` as some of
    its examples show)."""
    if not isinstance(body, dict):
        return []
    errors = body.get("errors") if isinstance(body.get("errors"), list) else [body.get("error")]
    return [str(e.get("code", "")).upper() for e in errors if isinstance(e, dict)]


def _for_good(status: int, body: Any) -> str | None:
    codes = error_codes(body)
    if any(c in KEY_CODES for c in codes):
        return "key missing or refused"
    if status == 429 and any(c in SPENT_CODES for c in codes):
        return "quota spent"
    return None


class BraveSettings(Strict):
    """The Brave Search API (key: ``BRAVE_API_KEY``)."""

    base_url: str = Field(
        "https://api.search.brave.com/res/v1",
        pattern=r"^https?://\S+$",
        description="The API's base; /web/search is added.",
    )
    country: str | None = Field(
        None, pattern=r"^[A-Za-z]{2}$", description="Brave country, e.g. 'US'; unset: Brave's."
    )


class BraveSearch(SearchProvider):
    """Web search with the Brave Search API, paging 20 at a time, retrying 429 and 5xx."""

    name = "brave"
    page_size = PAGE_SIZE
    usd_per_1000 = 5.0
    """Search plan, $5 per 1,000 requests (https://brave.com/search/api/, read 2026-11)."""

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = "https://api.search.brave.com/res/v1",
        country: str | None = None,
        retries: int = 3,
        backoff_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        transport: httpx.BaseTransport | None = None,
    ):
        if not api_key:
            raise SearchUnavailable(f"brave needs {API_KEY_ENV} set", provider=self.name)
        self.secrets = (api_key,)
        self.url = base_url.rstrip("/") + "/web/search"
        self.country = country
        self._clock = clock
        self._api = JsonApi(
            self.name,
            headers={"X-Subscription-Token": api_key, "Accept": "application/json"},
            secrets=self.secrets,
            policy=RetryPolicy(retries, backoff_s),
            sleep=sleep,
            for_good=_for_good,
            transport=transport,
        )

    @classmethod
    def from_settings(cls, own: BraveSettings, *, retries: int) -> BraveSearch:
        """Build from ``BRAVE_API_KEY`` and ``web.search.brave``."""
        return cls(env_key(cls.name, API_KEY_ENV), base_url=own.base_url, country=own.country,
                   retries=retries)  # fmt: skip

    def _params(self, query: str, date_restrict: str | None, language: str | None) -> dict:
        params: dict[str, Any] = {"q": query}
        if date_restrict:
            today = self._clock().date()
            params["freshness"] = FRESHNESS.get(date_restrict) or (
                f"{restrict_start(date_restrict, today)}to{today}"
            )
        if language:
            code = language_code(language).lower()
            params["search_lang"] = LANGUAGES.get(code, code)
        if self.country:
            params["country"] = self.country
        return params

    def search(
        self, query: str, *, num: int, date_restrict: str | None = None, language: str | None = None
    ) -> list[SearchHit]:
        """Up to ``num`` hits: pages of up to 20 until ``num`` hits or no more results."""
        found = HitList(query, self.name, num, self._clock())
        params = self._params(query, date_restrict, language)
        size = min(PAGE_SIZE, num)  # offset counts pages of this size
        for offset in range(LAST_OFFSET + 1):
            page = self._api.get(self.url, {**params, "count": size, "offset": offset}, query=query)
            results = (page.get("web") or {}).get("results") or []
            found.add(results, "url", "title", "description")
            more = (page.get("query") or {}).get("more_results_available")
            if found.full or not results or more is False:
                break
        return found.hits
