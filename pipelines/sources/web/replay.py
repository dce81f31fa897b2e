"""Replay: fetch results served from the WARC archive, with no network connection at all.

The same index lets a live run resume: URLs whose outcome is already archived are not fetched
again, unless it is one that asks for a later try (``fetch.REFETCHED``: ``rate_limited``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from pipelines.sources.web.fetch import REFETCHED, Fetcher, FetchResult
from pipelines.sources.web.http_body import read_body
from pipelines.sources.web.settings import FetchSettings
from pipelines.sources.web.warc_archive import Recorded, read_archive, unreadable


def load_index(folder: Path, fetch: FetchSettings | None = None) -> dict[str, FetchResult]:
    """Map each archived URL to its latest outcome, with the decoded text of successful fetches.

    A successful fetch's body passes the live fetcher's checks again under ``fetch`` (default:
    the default settings): over ``max_bytes``, as archived or once decompressed, it is
    ``too_large`` (never inflated past the cap), and one that does not decompress or is binary
    ends as the live fetcher would end it (:func:`~pipelines.sources.web.http_body.read_body`).
    An outcome that does not make a :class:`FetchResult` (a field missing or unknown, a bad
    date) is a :class:`SourceFormatError` naming the WARC file and the URL.
    """
    cap = (fetch or FetchSettings()).max_bytes
    index: dict[str, FetchResult] = {}
    if not folder.is_dir():
        return index
    for url, recorded in read_archive(folder, max_body=cap):
        try:
            index[url] = _result(recorded, cap)
        except (KeyError, TypeError, ValueError) as exc:
            problem = f"no {exc} field" if isinstance(exc, KeyError) else str(exc)
            raise unreadable(recorded.path, f"the outcome record for {url}", problem) from exc
    return index


def _result(recorded: Recorded, cap: int) -> FetchResult:
    outcome = dict(recorded.outcome)
    outcome["fetched_at"] = datetime.fromisoformat(outcome["fetched_at"])
    if outcome["status"] != "ok":
        return FetchResult(**outcome)
    encoding, kind = outcome.get("content_encoding", ""), outcome.get("content_type", "")
    where = outcome.get("final_url") or outcome["url"]
    body = read_body(recorded.body, encoding, kind, outcome.get("charset", ""), cap, where)
    if body.status != "ok":  # the archived reason and charset stay with a body that passes
        return FetchResult(**{**outcome, "status": body.status, "reason": body.reason})
    return FetchResult(**outcome, text=body.text)


class ReplayFetcher:
    """Answers like :class:`Fetcher`, from the archive only, under ``fetch``'s caps."""

    def __init__(self, folder: Path, fetch: FetchSettings | None = None):
        self.folder = folder
        self.index = load_index(folder, fetch)

    async def __aenter__(self) -> ReplayFetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def fetch(self, url: str, content_types: Sequence[str] | None = None) -> FetchResult:
        """The archived result, or an ``error`` saying the URL was never recorded
        (``content_types`` is decided when the fetch was recorded, and ignored here)."""
        found = self.index.get(url)
        if found is not None:
            return found
        return FetchResult(url, "error", f"not in the archive {self.folder}; fetch it live first")

    async def fetch_all(self, urls: Sequence[str]) -> list[FetchResult]:
        """Results for ``urls`` in order."""
        return [await self.fetch(url) for url in urls]


class Resuming:
    """A live fetcher that takes what is archived already (but for :data:`REFETCHED`
    outcomes) from the archive's index instead of fetching it again; ``fresh`` names the URLs
    it fetched live."""

    def __init__(self, fetcher: Fetcher, index: dict[str, FetchResult]):
        self.fetcher = fetcher
        self.done = {u: r for u, r in index.items() if r.status not in REFETCHED}
        self.fresh: set[str] = set()

    async def fetch(self, url: str, content_types: Sequence[str] | None = None) -> FetchResult:
        """The archived outcome of ``url``, or a live fetch of it."""
        if url in self.done:
            return self.done[url]
        self.fresh.add(url)
        return await self.fetcher.fetch(url, content_types)

    async def fetch_all(self, urls: Sequence[str]) -> list[FetchResult]:
        """Results for ``urls`` in order; only those not archived are fetched, concurrently."""
        todo = [u for u in dict.fromkeys(urls) if u not in self.done]
        self.fresh.update(todo)
        results = {r.url: r for r in await self.fetcher.fetch_all(todo)}
        return [self.done[u] if u in self.done else results[u] for u in urls]
