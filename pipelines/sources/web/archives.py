"""Archived copies of dead human-editor links: the citation's own ``archive-url``, then the
Wayback Machine's snapshot closest to the date the editor read the page.

A link whose live fetch ended ``dead``, ``error`` or ``not_html`` (:data:`RECOVERABLE`) is tried
in ``web.archives.order``. Every request goes through the same fetcher as any page (robots.txt
of the archive host, per-host limits, byte and time caps, the address guard, the WARC archive),
so a replayed run resolves lookups and copies from the archive with no network.

- ``citation``: the citation's ``archive-url``; a Wayback-shaped one is fetched in its raw form.
- ``wayback``: the availability API (https://archive.org/help/wayback_api.php) asked
  ``?url=<link>&timestamp=<YYYYMMDD>`` answers ``{"archived_snapshots": {"closest":
  {"available": true, "url": ..., "timestamp": "YYYYMMDDhhmmss", "status": "200"}}}``, or
  ``{"archived_snapshots": {}}`` when it holds no copy. The timestamp aimed at is the citation's
  ``access-date``, else the event's date. The closest snapshot is fetched raw.

Wayback memento URLs read ``<host>/web/<timestamp><flag>/<original URL>``; the ``id_`` flag
serves the page as it was archived, without the Wayback toolbar or rewritten links (the playback
modes of https://wayback.readthedocs.io/en/stable/usage.html). A copy counts only when it is
``ok`` and is a copy of the link itself: one that ends in a 5xx, a redirect loop, a robots.txt
disallow or any failure, that Wayback serves for another URL, or that redirects off the archive
host, counts as no copy, with the reason kept on the document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Protocol
from urllib.parse import urlencode

import anyio

from builders.wikigen.event_date import parse_date
from pipelines.sources.web.fetch import FetchResult
from pipelines.sources.web.settings import ArchiveSettings
from pipelines.sources.web.urls import DEFAULT_PORTS, host_of, split_url

RECOVERABLE = ("dead", "error", "not_html")
"""Live outcomes of a human-editor link that send it to the archives (issue 31)."""
API_TYPES = ("application/json", "text/json", "text/plain")
"""Content types accepted from the availability API."""
_MEMENTO_RE = re.compile(r"^(https?://[^/]+(?:/[^/]+)*?)/web/(\d{4,14})([a-z]{2}_)?/(.+)$")


class Fetches(Protocol):
    """What the archives are fetched through: the live fetcher, or the replay of the archive."""

    async def fetch(
        self, url: str, content_types: Sequence[str] | None = None
    ) -> FetchResult: ...  # pragma: no cover


@dataclass(frozen=True)
class Wanted:
    """A dead link to look for: its URL, its citation's archive fields, and the day aimed at
    (the citation's access date, else the event's date; None: the newest copy)."""

    url: str
    archive_url: str = ""
    archive_date: str = ""
    aim: date | None = None


@dataclass(frozen=True)
class Copy:
    """An archived copy that passed: which archive, its URL, when it was made, its fetch."""

    archive: str
    memento_url: str
    memento_at: datetime | None
    result: FetchResult


@dataclass(frozen=True)
class Recovery:
    """How looking for a copy of one link ended: the archives tried, the copy found (None:
    none), and why each archive tried gave none."""

    tried: tuple[str, ...]
    copy: Copy | None
    misses: tuple[str, ...]

    def note(self) -> str:
        """The misses in words, for a document left without a copy."""
        return "no archived copy: " + "; ".join(self.misses) if self.misses else ""


class ArchiveAnswerError(ValueError):
    """An archive's lookup answer is not the documented JSON; the message names its URL."""


def memento_parts(url: str) -> tuple[str, str, str] | None:
    """``(prefix, timestamp, original URL)`` of a Wayback-shaped memento URL, else None."""
    found = _MEMENTO_RE.match(url)
    return (found[1], found[2], found[4]) if found else None


def raw_memento(url: str) -> str:
    """The ``id_`` (raw, toolbar-free) form of a Wayback-shaped memento URL; others as given."""
    parts = memento_parts(url)
    return f"{parts[0]}/web/{parts[1]}id_/{parts[2]}" if parts else url


def memento_time(timestamp: str) -> datetime | None:
    """A Wayback timestamp (``YYYYMMDDhhmmss``, digits on the right may be missing) in UTC."""
    padded = timestamp + "0101000000"[max(0, len(timestamp) - 4) :]
    try:
        return datetime.strptime(padded[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def citation_date(text: str) -> date | None:
    """A CS1 date as editors write it (``6 March 2026``, ``March 6, 2026``, ``2026-03-06``),
    read as infobox dates are; a month or a year alone means its first day."""
    found = parse_date(text)
    if found is None:
        return None
    year, month, day = [*found.split("-"), "1", "1"][:3]
    return date(int(year), int(month), int(day))


def lookup_url(api: str, url: str, aim: date | None) -> str:
    """The availability API's question for ``url``, aimed at the day ``aim``."""
    query = {"url": url} | ({"timestamp": aim.strftime("%Y%m%d")} if aim else {})
    return f"{api}{'&' if '?' in api else '?'}{urlencode(query)}"


def closest_snapshot(text: str, where: str) -> tuple[str, str] | None:
    """``(url, timestamp)`` of the closest snapshot in an availability answer, None when it
    holds none; a body that is not the documented JSON is an :class:`ArchiveAnswerError`."""
    try:
        answer = json.loads(text)
    except ValueError as exc:
        raise ArchiveAnswerError(f"malformed availability JSON from {where}: {exc}") from exc
    snapshots = answer.get("archived_snapshots") if isinstance(answer, dict) else None
    if not isinstance(snapshots, dict):
        raise ArchiveAnswerError(f"availability answer from {where} has no archived_snapshots")
    closest = snapshots.get("closest")
    if closest is None:
        return None
    if not isinstance(closest, dict) or not isinstance(closest.get("url"), str):
        raise ArchiveAnswerError(f"availability answer from {where}: closest has no url")
    status = str(closest.get("status", "200"))
    if closest.get("available") is False or not status.startswith("2"):
        return None
    return closest["url"], str(closest.get("timestamp", ""))


def page_key(url: str) -> tuple[str, str, str]:
    """What makes two spellings of a URL the same page for an archive: the host without
    ``www.`` and a default port, the path without a trailing slash, and the query (Wayback
    stores ``http://www.example.com:80/`` for ``https://example.com``)."""
    try:
        parts, port = split_url(url if "://" in url else f"http://{url}")
    except ValueError:
        return (url, "", "")
    host = (parts.hostname or "").lower().removeprefix("www.")
    if port not in (None, *DEFAULT_PORTS.values()):
        host = f"{host}:{port}"
    return host, parts.path.rstrip("/"), parts.query


def same_page(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` name the same page, as an archive spells URLs."""
    return page_key(a) == page_key(b)


def _not_a_copy(wanted: Wanted, asked: str, result: FetchResult) -> str:
    """Why the fetch of ``asked`` is no copy of ``wanted`` ('' when it is one)."""
    if result.status != "ok":
        return f"{asked} ended {result.status} ({result.reason})"
    final = result.final_url or asked
    parts = memento_parts(final)
    if parts is not None and not same_page(parts[2], wanted.url):
        return f"{final} is a copy of another URL, {parts[2]}"
    if parts is None and host_of(final) != host_of(asked):
        return f"{asked} redirected off the archive, to {final}"
    return ""


class _Looker:
    """Looks for a copy of each wanted link in the archives of ``settings``, in order."""

    def __init__(
        self,
        fetcher: Fetches,
        settings: ArchiveSettings,
        on_copy: Callable[[Wanted, Copy], None] | None,
    ):
        self.fetcher = fetcher
        self.settings = settings
        self.on_copy = on_copy

    async def recover(self, wanted: Wanted) -> Recovery:
        tried: list[str] = []
        misses: list[str] = []
        for archive in self.settings.order:
            if archive == "citation" and not wanted.archive_url:
                continue  # nothing to try: the citation names no archived copy
            tried.append(archive)
            copy, miss = await self._try(archive, wanted)
            if copy is not None:
                if self.on_copy is not None:
                    self.on_copy(wanted, copy)
                return Recovery(tuple(tried), copy, tuple(misses))
            misses.append(f"{archive}: {miss}")
        return Recovery(tuple(tried), None, tuple(misses))

    async def _try(self, archive: str, wanted: Wanted) -> tuple[Copy | None, str]:
        if archive == "citation":
            stamp = memento_parts(wanted.archive_url)
            day = citation_date(wanted.archive_date)
            at = memento_time(stamp[1]) if stamp else None
            if at is None and day is not None:
                at = datetime(day.year, day.month, day.day, tzinfo=UTC)
            return await self._memento(archive, wanted, raw_memento(wanted.archive_url), at)
        asked = lookup_url(self.settings.wayback_api, wanted.url, wanted.aim)
        answer = await self.fetcher.fetch(asked, API_TYPES)
        if answer.status != "ok":
            return None, f"lookup {asked} ended {answer.status} ({answer.reason})"
        try:
            closest = closest_snapshot(answer.text, asked)
        except ArchiveAnswerError as exc:
            return None, str(exc)
        if closest is None:
            return None, f"no snapshot ({asked})"
        memento = raw_memento(closest[0])
        parts = memento_parts(memento)
        if parts is not None and not same_page(parts[2], wanted.url):
            return None, f"the closest snapshot {closest[0]} is a copy of another URL"
        at = memento_time(parts[1] if parts else closest[1])
        return await self._memento(archive, wanted, memento, at)

    async def _memento(
        self, archive: str, wanted: Wanted, memento: str, at: datetime | None
    ) -> tuple[Copy | None, str]:
        result = await self.fetcher.fetch(memento)
        miss = _not_a_copy(wanted, memento, result)
        if miss:
            return None, miss
        final = memento_parts(result.final_url or memento)
        made = memento_time(final[1]) if final else None  # Wayback redirects to its capture
        return Copy(archive, memento, made or at, result), ""


async def recover_all(
    fetcher: Fetches,
    settings: ArchiveSettings,
    wanted: Sequence[Wanted],
    on_copy: Callable[[Wanted, Copy], None] | None = None,
) -> dict[Wanted, Recovery]:
    """Look for a copy of every wanted link, concurrently (the fetcher keeps its limits);
    ``on_copy`` hears of each copy found (the live run links it to its original in the WARC)."""
    looker = _Looker(fetcher, settings, on_copy)
    found: dict[Wanted, Recovery] = {}

    async def one(item: Wanted) -> None:
        found[item] = await looker.recover(item)

    async with anyio.create_task_group() as group:
        for item in dict.fromkeys(wanted):
            group.start_soon(one, item)
    return {item: found[item] for item in dict.fromkeys(wanted)}
