"""The polite fetcher: httpx with robots.txt, per-host limits, retries, byte caps, an SSRF guard
and a WARC record of everything it sends and receives.

Every URL ends in exactly one status: ``ok``, ``dead`` (4xx but 429), ``error`` (5xx, connection
failures, redirect loops, bodies cut short or that do not decompress), ``timeout``, ``robots``,
``blocked_address``, ``too_large``, ``not_html``, ``binary`` (an image, PDF or archive, whatever
its Content-Type says) or ``rate_limited`` (429, or 503 asking for a Retry-After over the cap),
with a reason.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import anyio
import httpcore
import httpx

from builders.wikigen.records import FETCH_STATUSES
from pipelines import __version__
from pipelines.retry import RetryPolicy, retry_after_s
from pipelines.sources.web.address_guard import AddressPolicy, BlockedAddressError, GuardedBackend
from pipelines.sources.web.http_body import (
    ACCEPT_ENCODING,
    TooLargeError,
    decompress,
    media_type,
    read_body,
)
from pipelines.sources.web.robots import allowed, parse_robots
from pipelines.sources.web.settings import FetchSettings
from pipelines.sources.web.urls import split_url
from pipelines.sources.web.warc_archive import WarcArchive

STATUSES = FETCH_STATUSES
REFETCHED = ("rate_limited",)
"""Archived statuses that a later live run fetches again rather than taking from the archive."""
ROBOTS_REDIRECTS = 5  # RFC 9309 asks crawlers to follow at least five


@dataclass(frozen=True)
class FetchResult:
    """How fetching one URL ended."""

    url: str
    status: str
    reason: str
    final_url: str = ""
    http_status: int | None = None
    content_type: str = ""
    content_encoding: str = ""
    charset: str = ""
    text: str = ""
    attempts: int = 0
    fetched_at: datetime = field(default_factory=lambda: datetime.now(UTC).replace(microsecond=0))
    response_record: str = ""

    def outcome(self) -> dict[str, Any]:
        """The JSON kept in the archive (everything but the text, which the response holds)."""
        data = asdict(self)
        data.pop("text")
        return data


@dataclass
class _Response:
    status: int
    reason_phrase: str
    headers: list[tuple[str, str]]
    raw: bytes
    record_id: str = ""

    def header(self, name: str) -> str:
        return next((v for k, v in self.headers if k.lower() == name.lower()), "")


class _Failure(Exception):
    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _checked(url: str) -> str:
    """``url`` if it is a well-formed http(s) URL; else an ``error`` failure naming it."""
    try:
        scheme = split_url(url)[0].scheme
    except ValueError as exc:
        raise _Failure("error", str(exc)) from exc
    if scheme not in ("http", "https"):
        raise _Failure("error", f"unsupported URL scheme in {url}")
    return url


def _redirect(url: str, response: _Response) -> str | None:
    """Where a 3xx ``response`` to ``url`` points, or None when it is no redirect."""
    location = response.header("location")
    if not (300 <= response.status < 400 and location):
        return None
    try:
        target = urljoin(url, location)
    except ValueError as exc:
        raise _Failure("error", f"malformed Location {location!r} from {url}: {exc}") from exc
    return _checked(target)


@dataclass
class _Host:
    slots: anyio.Semaphore
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    robots_lock: anyio.Lock = field(default_factory=anyio.Lock)
    next_at: float = 0.0
    rules: RobotFileParser | None = None


def user_agent(contact: str) -> str:
    """Our User-Agent: product/version (contact)."""
    return f"benchsmith/{__version__} (+{contact})"


def guarded_transport(
    policy: AddressPolicy, limits: httpx.Limits, ca_file: str | None = None
) -> httpx.AsyncHTTPTransport:
    """An httpx transport whose every connection goes through :class:`GuardedBackend`."""
    transport = httpx.AsyncHTTPTransport(limits=limits)
    ssl_context = httpx.create_ssl_context()
    if ca_file:
        ssl_context.load_verify_locations(cafile=ca_file)
    # httpx builds its connection pool without a hook for the network backend; swap the pool.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=ssl_context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=GuardedBackend(policy),
    )
    return transport


class Fetcher:
    """Fetch URLs politely; use as ``async with Fetcher(settings, archive) as f``."""

    def __init__(
        self,
        settings: FetchSettings,
        archive: WarcArchive | None = None,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ):
        self.settings = settings
        self.archive = archive
        self.agent = user_agent(settings.contact)
        self.policy = AddressPolicy(settings.allow_addresses, settings.resolve)
        self._sleep = sleep
        self._hosts: dict[str, _Host] = {}
        self._client: httpx.AsyncClient | None = None
        self._slots: anyio.Semaphore | None = None

    async def __aenter__(self) -> Fetcher:
        s = self.settings
        limits = httpx.Limits(
            max_connections=s.concurrency, max_keepalive_connections=s.concurrency
        )
        self._client = httpx.AsyncClient(
            transport=guarded_transport(self.policy, limits, s.ca_file),
            timeout=httpx.Timeout(s.read_timeout_s, connect=s.connect_timeout_s),
            follow_redirects=False,
            headers={"User-Agent": self.agent, "Accept-Encoding": ACCEPT_ENCODING},
        )
        self._slots = anyio.Semaphore(s.concurrency)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def fetch_all(self, urls: Sequence[str]) -> list[FetchResult]:
        """Fetch ``urls`` concurrently; results come back in the same order."""
        results: list[FetchResult | None] = [None] * len(urls)

        async def one(i: int, url: str) -> None:
            results[i] = await self.fetch(url)

        async with anyio.create_task_group() as group:
            for i, url in enumerate(urls):
                group.start_soon(one, i, url)
        return [r for r in results if r is not None]

    async def fetch(self, url: str, content_types: Sequence[str] | None = None) -> FetchResult:
        """Fetch one URL, following redirects by hand; record its outcome in the archive.

        ``content_types`` replaces ``settings.content_types`` for this URL (an API's JSON)."""
        assert self._slots is not None, "use Fetcher as an async context manager"
        kinds = tuple(self.settings.content_types if content_types is None else content_types)
        async with self._slots:
            # all records of this fetch, its outcome included, go to one WARC file
            with self.archive.fetch() if self.archive is not None else nullcontext():
                try:
                    result = await self._fetch(url, kinds)
                except Exception as exc:  # a bug costs this URL, not the crawl
                    result = FetchResult(url, "error", f"{type(exc).__name__}: {exc}")
                if self.archive is not None:
                    self.archive.write_outcome(url, result.outcome())
        return result

    async def _fetch(self, url: str, kinds: Sequence[str]) -> FetchResult:
        current, seen, attempts = url, {url}, 0
        try:
            _checked(url)
            for _ in range(self.settings.max_redirects + 1):
                try:
                    current = self.policy.dotted_quad(current)
                except BlockedAddressError as exc:
                    raise _Failure("blocked_address", str(exc)) from exc
                if not await self._robots_allow(current):
                    raise _Failure("robots", f"robots.txt disallows {current}")
                response, tries = await self._with_retries(current)
                attempts += tries
                target = _redirect(current, response)
                if target is not None:
                    if target in seen:
                        raise _Failure("error", f"redirect loop at {target}")
                    seen.add(target)
                    current = target
                    continue
                return self._finish(url, current, response, attempts, kinds)
            raise _Failure("error", f"more than {self.settings.max_redirects} redirects")
        except _Failure as failure:
            return FetchResult(
                url, failure.status, failure.reason, final_url=current, attempts=attempts
            )

    def _finish(
        self, url: str, final: str, response: _Response, attempts: int, kinds: Sequence[str]
    ) -> FetchResult:
        status = response.status
        kind, declared = media_type(response.header("content-type"))
        common = {
            "final_url": final,
            "http_status": status,
            "content_type": kind,
            "content_encoding": response.header("content-encoding"),
            "attempts": attempts,
            "response_record": response.record_id,
        }
        limited = self._rate_limited(response, attempts)
        if limited:
            return FetchResult(url, "rate_limited", limited, **common)
        if 400 <= status < 500:
            return FetchResult(url, "dead", f"HTTP {status}", **common)
        if not 200 <= status < 300:
            return FetchResult(url, "error", f"HTTP {status} after {attempts} attempts", **common)
        if kind not in kinds:
            return FetchResult(url, "not_html", f"content type {kind or 'missing'}", **common)
        encoding = response.header("content-encoding")
        body = read_body(response.raw, encoding, kind, declared, self.settings.max_bytes, final)
        return FetchResult(
            url, body.status, body.reason, charset=body.charset, text=body.text, **common
        )

    def _rate_limited(self, response: _Response, attempts: int) -> str:
        """Why ``response`` is a rate limit, or "": a 429 whatever it asks, and a 503 asking
        to come back after longer than ``max_retry_after_s`` (not waited for)."""
        header = response.header("retry-after")
        asked = retry_after_s(header)
        cap = self.settings.max_retry_after_s
        if response.status in (429, 503) and asked is not None and asked > cap:
            return (
                f"HTTP {response.status} with Retry-After {header!r} ({asked:.0f} s), over the "
                f"{cap:g} s cap"
            )
        if response.status == 429:
            after = f", last Retry-After {header!r}" if header else ""
            return f"HTTP 429 after {attempts} attempts{after}"
        return ""

    async def _with_retries(self, url: str) -> tuple[_Response, int]:
        s = self.settings
        policy = RetryPolicy(s.retries, s.backoff_s, s.max_retry_after_s)
        for attempt in range(s.retries + 1):
            response = await self._request(url)
            if response.status != 429 and response.status < 500:
                return response, attempt + 1
            wait = policy.wait_s(attempt, retry_after_s(response.header("retry-after")))
            if wait is None:
                return response, attempt + 1
            await self._sleep(wait)
        raise AssertionError("unreachable")

    def _host(self, url: str) -> _Host:
        key = urlsplit(url).netloc.lower()
        if key not in self._hosts:
            self._hosts[key] = _Host(anyio.Semaphore(self.settings.per_host_concurrency))
        return self._hosts[key]

    async def _robots_allow(self, url: str) -> bool:
        host = self._host(url)
        async with host.robots_lock:  # one robots.txt request per host, however many tasks wait
            if host.rules is None:
                host.rules = await self._read_robots(url)
        return allowed(host.rules, self.settings.robots_agent, url)

    async def _read_robots(self, url: str) -> RobotFileParser:
        """The rules of ``url``'s host, following up to five redirects (RFC 9309).

        A robots.txt that cannot be read or decompressed disallows everything, as does one still
        redirecting after five hops. A host that cannot be reached at all (a blocked address, a
        failed connection, a host httpx refuses as invalid) fails the page itself, with that
        reason.
        """
        parts = urlsplit(url)
        current = f"{parts.scheme}://{parts.netloc}/robots.txt"
        try:
            response = await self._request(current)
        except _Failure as failure:
            if failure.status == "blocked_address" or isinstance(
                failure.__cause__, (httpx.ConnectError, httpx.InvalidURL)
            ):
                raise
            return parse_robots(None, "")
        try:
            for _ in range(ROBOTS_REDIRECTS):
                target = _redirect(current, response)
                if target is None:
                    break
                current = target
                response = await self._request(current)
            text = ""
            if response.status == 200:
                body = decompress(
                    response.raw, response.header("content-encoding"), self.settings.max_bytes
                )
                text = body.decode("utf-8", "replace")
        except (_Failure, ValueError):
            return parse_robots(None, "")
        return parse_robots(response.status, text)

    async def _request(self, url: str) -> _Response:
        """One GET, within the host's limits, recorded in the archive whatever happens."""
        host = self._host(url)
        async with host.slots:
            async with host.lock:
                wait = host.next_at - time.monotonic()
                if wait > 0:
                    await self._sleep(wait)
                host.next_at = time.monotonic() + self.settings.per_host_delay_s
            try:
                with anyio.fail_after(self.settings.total_timeout_s):
                    response = await self._get(url)
            except BlockedAddressError as exc:
                self._record(url, None)
                raise _Failure("blocked_address", str(exc)) from exc
            except (TimeoutError, httpx.TimeoutException) as exc:
                self._record(url, None)
                raise _Failure("timeout", f"no complete answer from {url} in time") from exc
            except TooLargeError as exc:
                self._record(url, None)
                raise _Failure("too_large", str(exc)) from exc
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                self._record(url, None)
                raise _Failure("error", f"{type(exc).__name__} from {url}: {exc}") from exc
        response.record_id = self._record(url, response)
        return response

    async def _get(self, url: str) -> _Response:
        assert self._client is not None
        cap = self.settings.max_bytes
        async with self._client.stream("GET", url) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > cap:
                raise TooLargeError(f"Content-Length {declared} over {cap} bytes")
            chunks, size = [], 0
            async for chunk in response.aiter_raw():
                size += len(chunk)
                if size > cap:
                    raise TooLargeError(f"more than {cap} bytes")
                chunks.append(chunk)
            return _Response(
                response.status_code,
                response.reason_phrase,
                list(response.headers.multi_items()),
                b"".join(chunks),
            )

    def _record(self, url: str, response: _Response | None) -> str:
        if self.archive is None:
            return ""
        request_headers = [("User-Agent", self.agent), ("Accept-Encoding", ACCEPT_ENCODING)]
        if response is None:
            return self.archive.write_exchange(url, request_headers, None, [], b"")
        status_line = f"{response.status} {response.reason_phrase}".strip()
        return self.archive.write_exchange(
            url, request_headers, status_line, response.headers, response.raw
        )
