"""Replay: fetch results served from the WARC archive, with no network connection at all.

The same index lets a live run resume: URLs whose outcome is already archived are not fetched
again, unless it is one that asks for a later try (``fetch.REFETCHED``: ``rate_limited``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from pipelines.sources.web.fetch import FetchResult
from pipelines.sources.web.http_body import decode_text, decompress
from pipelines.sources.web.warc_archive import Recorded, read_archive, unreadable

_NO_CAP = 1 << 40


def load_index(folder: Path) -> dict[str, FetchResult]:
    """Map each archived URL to its latest outcome, with the decoded text of successful fetches.

    An outcome that does not make a :class:`FetchResult` (a field missing or unknown, a bad
    date, a body that does not decompress) is a :class:`SourceFormatError` naming the WARC file
    and the URL.
    """
    index: dict[str, FetchResult] = {}
    if not folder.is_dir():
        return index
    for url, recorded in read_archive(folder):
        try:
            index[url] = _result(recorded)
        except (KeyError, TypeError, ValueError) as exc:
            problem = f"no {exc} field" if isinstance(exc, KeyError) else str(exc)
            raise unreadable(recorded.path, f"the outcome record for {url}", problem) from exc
    return index


def _result(recorded: Recorded) -> FetchResult:
    outcome = dict(recorded.outcome)
    outcome["fetched_at"] = datetime.fromisoformat(outcome["fetched_at"])
    text = ""
    if outcome["status"] == "ok":
        body = decompress(recorded.body, outcome.get("content_encoding", ""), _NO_CAP)
        text = decode_text(body, outcome.get("charset", "")).text
    return FetchResult(**outcome, text=text)


class ReplayFetcher:
    """Answers like :class:`Fetcher`, from the archive only."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.index = load_index(folder)

    async def __aenter__(self) -> ReplayFetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def fetch(self, url: str) -> FetchResult:
        """The archived result, or an ``error`` saying the URL was never recorded."""
        found = self.index.get(url)
        if found is not None:
            return found
        return FetchResult(url, "error", f"not in the archive {self.folder}; fetch it live first")

    async def fetch_all(self, urls: Sequence[str]) -> list[FetchResult]:
        """Results for ``urls`` in order."""
        return [await self.fetch(url) for url in urls]
