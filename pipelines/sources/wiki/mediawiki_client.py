"""A polite MediaWiki API client on top of pymediawiki: User-Agent, rate limit, maxlag, retries."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from pipelines import __version__
from pipelines.errors import WikiApiError
from pipelines.retry import RetryPolicy, backoff_s
from pipelines.sources.wiki.settings import ApiSettings
from pipelines.sources.wiki.xml_source import parse_timestamp

log = logging.getLogger(__name__)


def user_agent(contact: str) -> str:
    """Build a User-Agent after Wikimedia's policy: ``client/version (contact) library/version``."""
    from importlib.metadata import version

    return f"benchsmith/{__version__} ({contact}) pymediawiki/{version('pymediawiki')}"


def _transient(code: str) -> bool:
    """API error codes worth retrying: rate limits, read-only spells, internal errors."""
    return code in {"ratelimited", "readonly"} or code.startswith("internal_api_error")


class MediaWikiClient:
    """Sends API requests through pymediawiki's session, retrying what is worth retrying.

    Retries (up to ``settings.retries``, exponential backoff with jitter) cover connection errors,
    timeouts, non-JSON answers such as a 429 or 5xx page, the ``ratelimited``, ``readonly`` and
    ``internal_api_error_*`` codes, and ``maxlag`` errors, whose advertised lag is waited out.
    pymediawiki does not expose response headers, so ``Retry-After`` cannot be read here.
    """

    def __init__(self, settings: ApiSettings, sleep: Callable[[float], None] = time.sleep):
        from mediawiki import MediaWiki
        from mediawiki.exceptions import MediaWikiBaseException
        from requests import RequestException

        self.settings = settings
        self._sleep = sleep
        try:
            self.wiki = MediaWiki(
                url=settings.url,
                user_agent=user_agent(settings.contact),
                rate_limit=settings.request_interval_s > 0,
                rate_limit_wait=timedelta(seconds=settings.request_interval_s),
                timeout=settings.timeout_s,
            )
        except (MediaWikiBaseException, RequestException, KeyError, ValueError) as exc:
            raise WikiApiError(f"{settings.url}: cannot reach the MediaWiki API: {exc}") from exc

    def request(self, params: dict[str, Any]) -> dict[str, Any]:
        """Send one API request and return its JSON, raising :class:`WikiApiError` when it fails."""
        from mediawiki.exceptions import MediaWikiForbidden
        from requests import RequestException

        params = {**params, "formatversion": 2}
        if self.settings.maxlag_s:
            params["maxlag"] = self.settings.maxlag_s
        problem = ""
        policy = RetryPolicy(self.settings.retries)
        for attempt in range(self.settings.retries + 1):
            asked = None
            try:
                answer = self.wiki.wiki_request(dict(params))
            except MediaWikiForbidden as exc:
                raise WikiApiError(
                    f"{self.settings.url}: 403 Forbidden; the wiki refused this client. Check that "
                    "wiki.api.contact is a real contact (Wikimedia blocks agents without one)."
                ) from exc
            except RequestException as exc:
                problem = f"request failed: {exc}"
            else:
                error = answer.get("error") if isinstance(answer, dict) else None
                if answer and not error:
                    return answer
                if not answer:
                    problem = "empty or non-JSON answer (rate limited or server error)"
                elif error.get("code") == "maxlag":
                    problem = f"maxlag: replication lag {error.get('lag', '?')} s"
                    asked = max(backoff_s(1.0, attempt), float(error.get("lag") or 5))
                elif _transient(error.get("code", "")):
                    problem = f"API error {error.get('code')}: {error.get('info')}"
                else:
                    raise WikiApiError(
                        f"{self.settings.url}: API error {error.get('code')}: {error.get('info')}"
                    )
            wait = policy.wait_s(attempt, asked)
            if wait is None:
                break
            log.warning("%s: %s; retrying in %.1f s", self.settings.url, problem, wait)
            self._sleep(wait)
        raise WikiApiError(
            f"{self.settings.url}: giving up after {attempt + 1} attempts: {problem}"
        )

    @property
    def rest_url(self) -> str:
        """The wiki's REST API beside its action API (``…/api.php`` -> ``…/rest.php``)."""
        return self.settings.url.rsplit("/", 1)[0] + "/rest.php"

    def page_html(self, title: str) -> str:
        """The page's rendered HTML (Parsoid) from ``rest.php/v1/page/{title}/html``, retrying
        as :meth:`request` does; :class:`WikiApiError` naming the page when it cannot be had."""
        from requests import RequestException

        url = f"{self.rest_url}/v1/page/{quote(title.replace(' ', '_'), safe='')}/html"
        policy = RetryPolicy(self.settings.retries)
        problem = ""
        for attempt in range(self.settings.retries + 1):
            asked = None
            try:
                answer = self.wiki._session.get(url, timeout=self.settings.timeout_s)
            except RequestException as exc:
                problem = f"request failed: {exc}"
            else:
                if answer.status_code == 200:
                    answer.encoding = "utf-8"
                    return answer.text
                problem = f"HTTP {answer.status_code}"
                if answer.status_code not in (429, 500, 502, 503, 504):
                    break
                after = answer.headers.get("Retry-After", "")
                asked = float(after) if after.isdigit() else None
            wait = policy.wait_s(attempt, asked)
            if wait is None:
                break
            log.warning("%s: %s; retrying in %.1f s", url, problem, wait)
            self._sleep(wait)
        raise WikiApiError(f"{url}: no rendered HTML for page {title!r}: {problem}")

    def query(self, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Yield each ``query`` block of a request, following ``continue`` tokens."""
        cont: dict[str, Any] = {}
        while True:
            answer = self.request({"action": "query", **params, **cont})
            yield answer.get("query", {})
            if "continue" not in answer:
                return
            cont = answer["continue"]

    def siteinfo(self) -> tuple[str, dict[int, str], str]:
        """Return the wiki's article path base (``https://host/wiki/``), its namespace names
        by number (``14: "Kategorie"``) and its content language (``lang``, ``de``)."""
        info = next(self.query({"meta": "siteinfo", "siprop": "general|namespaces"}))
        general = info.get("general", {})
        server = general.get("server", "")
        if server.startswith("//"):
            server = "https:" + server
        base = server + general.get("articlepath", "/wiki/$1").replace("$1", "")
        names = info.get("namespaces", {})
        numbered = {int(k): v.get("name", "") for k, v in names.items() if k.lstrip("-").isdigit()}
        return base, numbered, general.get("lang", "")

    def first_revision_time(self, title: str) -> datetime | None:
        """Return the timestamp of a page's first revision, or ``None`` if it does not exist."""
        block = next(
            self.query(
                {
                    "prop": "revisions",
                    "titles": title,
                    "rvdir": "newer",
                    "rvlimit": 1,
                    "rvprop": "timestamp",
                }
            )
        )
        for page in block.get("pages", []):
            revisions = page.get("revisions") or []
            if revisions:
                return parse_timestamp(revisions[0]["timestamp"])
        return None
