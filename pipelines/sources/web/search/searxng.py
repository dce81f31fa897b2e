"""SearXNG, the free, self-hostable metasearch engine, through its JSON search API.

Built from SearXNG's documentation (https://docs.searxng.org/dev/search_api.html):
``GET {base}/search?q=…&format=json`` with ``pageno`` (from 1), ``language``, ``time_range``
(``day``, ``week``, ``month``, ``year``), ``categories`` and ``engines``; the answer's
``results[]`` carry ``url``, ``title`` and ``content``. An instance answers 403 when the JSON
format is not enabled in its ``settings.yml`` (``search: formats: [html, json]``). No key: the
instance is named by ``web.search.searxng.base_url``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

import httpx
from pydantic import Field

from builders.settings import Strict
from pipelines.retry import RetryPolicy
from pipelines.sources.web.search.base import (
    SearchHit,
    SearchProvider,
    SearchUnavailable,
    language_code,
    parse_restrict,
)
from pipelines.sources.web.search.calls import HitList, JsonApi

TIME_RANGES = ("day", "week", "month", "year")
"""SearXNG's time ranges, narrowest first."""
RANGE_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}
UNIT_DAYS = {"d": 1, "w": 7, "m": 31, "y": 366}
MAX_PAGES = 10
"""Pages asked at most for one query (an instance serves about 10 to 20 results a page)."""
HINT = (
    "; a SearXNG instance must enable the JSON format (settings.yml: search: formats: "
    "[html, json]) and let this client through its limiter"
)


def time_range(date_restrict: str) -> str | None:
    """The narrowest SearXNG time range that covers ``date_restrict`` (``None``: none does)."""
    unit, amount = parse_restrict(date_restrict)
    days = UNIT_DAYS[unit] * amount
    return next((r for r in TIME_RANGES if RANGE_DAYS[r] >= days), None)


class SearxngSettings(Strict):
    """A SearXNG instance (no key)."""

    base_url: str | None = Field(
        None,
        pattern=r"^https?://\S+$",
        description="The instance, e.g. http://127.0.0.1:8888; unset: searxng is not used.",
    )
    categories: list[str] = Field(
        default_factory=lambda: ["general"], description="SearXNG categories searched."
    )
    engines: list[str] = Field(
        default_factory=list, description="SearXNG engines searched; empty: the instance's."
    )


class SearXNG(SearchProvider):
    """Search through a SearXNG instance, page by page, retrying 429 and 5xx."""

    name = "searxng"
    page_size = 10
    """About what an instance serves a page (it depends on its engines)."""
    usd_per_1000 = 0.0
    """Self-hosted: no fee to SearXNG (the engines it asks have their own terms)."""

    def __init__(
        self,
        base_url: str,
        *,
        categories: list[str] | None = None,
        engines: list[str] | None = None,
        retries: int = 3,
        backoff_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        transport: httpx.BaseTransport | None = None,
    ):
        self.url = base_url.rstrip("/") + "/search"
        self.categories = categories or []
        self.engines = engines or []
        self._clock = clock
        self._api = JsonApi(
            self.name,
            headers={"Accept": "application/json"},
            secrets=(),
            policy=RetryPolicy(retries, backoff_s),
            sleep=sleep,
            hint=HINT,
            transport=transport,
        )

    @classmethod
    def from_settings(cls, own: SearxngSettings, *, retries: int) -> SearXNG:
        """Build from ``web.search.searxng``; no key."""
        if not own.base_url:
            raise SearchUnavailable(
                "searxng needs web.search.searxng.base_url, the address of a SearXNG instance "
                "(e.g. http://127.0.0.1:8888 for one run locally; see docs/guides/going-live.md)",
                provider=cls.name,
            )
        return cls(own.base_url, categories=own.categories, engines=own.engines,
                   retries=retries)  # fmt: skip

    def unsupported(self, *, date_restrict: str | None, language: str | None) -> list[str]:
        """A date restriction SearXNG has no exact time range for is widened, or dropped."""
        if not date_restrict:
            return []
        unit, amount = parse_restrict(date_restrict)
        covering = time_range(date_restrict)
        if amount == 1 and covering == TIME_RANGES["dwmy".index(unit)]:
            return []
        if covering is None:
            return [f"date_restrict {date_restrict}: SearXNG's widest time_range is a year; "
                    "searching without one"]  # fmt: skip
        return [f"date_restrict {date_restrict}: SearXNG has day, week, month and year only; "
                f"widened to time_range={covering}"]  # fmt: skip

    def search(
        self, query: str, *, num: int, date_restrict: str | None = None, language: str | None = None
    ) -> list[SearchHit]:
        """Up to ``num`` hits, pages from 1 until ``num`` hits or an empty page."""
        found = HitList(query, self.name, num, self._clock())
        params: dict[str, str | int] = {"q": query, "format": "json"}
        if date_restrict and (covering := time_range(date_restrict)):
            params["time_range"] = covering
        if language:
            params["language"] = language_code(language)
        if self.categories:
            params["categories"] = ",".join(self.categories)
        if self.engines:
            params["engines"] = ",".join(self.engines)
        for pageno in range(1, MAX_PAGES + 1):
            page = self._api.get(self.url, {**params, "pageno": pageno}, query=query)
            fresh = found.add(page.get("results") or [], "url", "title", "content")
            if found.full or not fresh:
                break
        return found.hits
