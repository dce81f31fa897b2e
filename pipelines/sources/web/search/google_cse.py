"""Google Programmable Search (Custom Search JSON API) through google-api-python-client.

Keys come from the environment only (``GOOGLE_API_KEY``, ``GOOGLE_CSE_ID``). The client sends
the key as the ``key=`` URL parameter, so every message that may carry a request URI (HttpError,
the client's own debug log) is redacted before anyone sees it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pipelines.retry import RetryPolicy, retry_after_s
from pipelines.secrets import RedactingFilter
from pipelines.sources.web.search.base import (
    SearchHit,
    SearchProvider,
    SearchUnavailable,
    redact,
)
from pipelines.sources.web.search.calls import Transient, refusal, with_retries

log = logging.getLogger(__name__)

API_KEY_ENV = "GOOGLE_API_KEY"
CSE_ID_ENV = "GOOGLE_CSE_ID"
PAGE_SIZE = 10
"""Most results per request (Custom Search JSON API: ``num`` is 1..10)."""
LAST_START = 91
"""Last page start: the API never returns more than 100 results for a query."""
CLOSED_MESSAGES = (
    "not available for new customers",
    "does not have the access to custom search json api",
    "whole-web search",
)
"""Phrases of Google's answers to a project that may no longer search the whole web."""
REPLACEMENT = (
    ". Google Programmable Search is closed to new customers and ends whole-web search on "
    "2027-01-01: set web.search.providers to e.g. [brave, serpapi, searxng] with BRAVE_API_KEY "
    "or SERPAPI_KEY in the environment, or web.search.searxng.base_url for a SearXNG instance "
    "(docs/guides/going-live.md)"
)
CLIENT_LOGGERS = ("googleapiclient.discovery", "googleapiclient.http", "googleapiclient.model")
"""google-api-python-client loggers that write request URIs (``discovery`` at DEBUG)."""


def _guard_client_logs(secrets: tuple[str, ...]) -> None:
    """Redact ``secrets`` (and ``key=`` values) from the client loggers' records, once."""
    for name in CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) and f.extra == secrets for f in logger.filters):
            logger.addFilter(RedactingFilter(secrets))


class GoogleCSE(SearchProvider):
    """Search with a Programmable Search Engine, paging 10 at a time, retrying 429 and 5xx.

    ``retries`` more attempts follow a 429 or 5xx answer (or a connection failure), waiting as
    :class:`~pipelines.retry.RetryPolicy` says (Retry-After, else ``backoff_s`` doubling with
    jitter); ``sleep``, ``http`` and ``clock`` are for tests.
    """

    name = "google_cse"
    page_size = PAGE_SIZE
    usd_per_1000 = 5.0
    """$5 per 1,000 queries beyond 100 free a day (https://developers.google.com/custom-search/
    v1/overview, read 2026-11); closed to new customers, whole-web search ends 2027-01-01."""

    def __init__(
        self,
        api_key: str,
        cse_id: str,
        *,
        retries: int = 3,
        backoff_s: float = 1.0,
        http: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ):
        if not api_key or not cse_id:
            raise SearchUnavailable("google_cse needs an API key and a search engine id (cx)")
        from googleapiclient.discovery import build  # 0.3 s to import; only live runs need it

        self.secrets = (api_key, cse_id)
        self.cse_id = cse_id
        self.policy = RetryPolicy(retries, backoff_s)
        self._sleep = sleep
        self._clock = clock
        _guard_client_logs(self.secrets)
        self._service = build(
            "customsearch",
            "v1",
            developerKey=api_key,
            static_discovery=True,
            cache_discovery=False,
            http=http,
        )

    @classmethod
    def from_env(cls, **options: Any) -> GoogleCSE:
        """Build from ``GOOGLE_API_KEY`` and ``GOOGLE_CSE_ID``; other options as in ``__init__``."""
        missing = [name for name in (API_KEY_ENV, CSE_ID_ENV) if not os.environ.get(name)]
        if missing:
            raise SearchUnavailable(
                f"live Google search needs {' and '.join(missing)} set in the environment "
                "(keys are read from the environment only, never from params.yaml)"
            )
        return cls(os.environ[API_KEY_ENV], os.environ[CSE_ID_ENV], **options)

    @classmethod
    def from_settings(cls, own: None, *, retries: int) -> GoogleCSE:
        """Build from the environment's keys (no settings of its own)."""
        return cls.from_env(retries=retries)

    def search(
        self, query: str, *, num: int, date_restrict: str | None = None, language: str | None = None
    ) -> list[SearchHit]:
        """Up to ``num`` hits: pages start at 1, 11, 21... until ``num`` hits or no next page."""
        retrieved_at = self._clock()
        hits: list[SearchHit] = []
        start = 1
        while len(hits) < num and start <= LAST_START:
            page = self._page(
                query,
                start=start,
                num=min(PAGE_SIZE, num - len(hits)),
                date_restrict=date_restrict,
                language=language,
            )
            items = page.get("items") or []
            for item in items[: num - len(hits)]:
                if not item.get("link"):
                    continue
                hits.append(
                    SearchHit(
                        query=query,
                        provider=self.name,
                        rank=len(hits) + 1,
                        url=item["link"],
                        title=item.get("title", ""),
                        snippet=item.get("snippet", ""),
                        retrieved_at=retrieved_at,
                    )
                )
            next_pages = (page.get("queries") or {}).get("nextPage") or []
            if not items or not next_pages:
                break
            next_start = int(next_pages[0].get("startIndex", start + len(items)))
            if next_start <= start:
                break
            start = next_start
        log.debug("google_cse: %d hits for %r", len(hits), query)
        return hits

    def _page(
        self,
        query: str,
        *,
        start: int,
        num: int,
        date_restrict: str | None,
        language: str | None,
    ) -> dict[str, Any]:
        params = {"q": query, "cx": self.cse_id, "num": num, "start": start}
        if date_restrict:
            params["dateRestrict"] = date_restrict
        if language:
            params["lr"] = language
        request = self._service.cse().list(**params)
        return with_retries(
            self.name, query, lambda: self._once(request, query), self.policy, self._sleep
        )

    def _once(self, request: Any, query: str) -> dict[str, Any]:
        """One attempt; raise "from None" throughout: a chained HttpError prints its URI."""
        import httplib2
        from googleapiclient.errors import HttpError

        try:
            return request.execute()
        except HttpError as exc:
            status = exc.resp.status
            detail = redact(str(exc), self.secrets)
            if status == 429 or status >= 500:
                asked = retry_after_s(exc.resp.get("retry-after"))
                raise Transient(f"HTTP {status}: {detail}", asked) from None
            closed = status == 410 or any(m in detail.lower() for m in CLOSED_MESSAGES)
            raise refusal(
                self.name, query, status, detail, hint=REPLACEMENT if closed else ""
            ) from None
        except (OSError, httplib2.HttpLib2Error) as exc:
            raise Transient(redact(f"{type(exc).__name__}: {exc}", self.secrets)) from None
