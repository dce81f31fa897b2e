"""The search log: hits appended as JSON lines, and a provider that replays them offline.

One line per hit: ``{"query", "provider", "rank", "url", "title", "snippet", "retrieved_at"}``
with ``retrieved_at`` in ISO 8601 (UTC). A query asked with no hits leaves one marker line,
``{"query", "provider", "no_hits": true, "retrieved_at"}``, so a resumed run does not ask it
again; logs written before markers existed are read as before.

A run killed mid-write can leave a torn, unterminated last line: readers skip it with a warning
and the next append cuts it off. A malformed line that ends in a newline is an error.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipelines.errors import MissingInputError, SourceFormatError
from pipelines.sources.web.search.base import SearchHit, SearchProvider, redact

log = logging.getLogger(__name__)

_TEXT_FIELDS = ("query", "provider", "url", "title", "snippet")
_MARKER_FIELDS = ("query", "provider", "no_hits", "retrieved_at")


@dataclass(frozen=True)
class NoHits:
    """A search log's marker: ``query`` was asked of ``provider`` and returned no hits."""

    query: str
    provider: str
    retrieved_at: datetime


class SearchLog:
    """Appends hits to a JSONL file, with ``secrets`` replaced by ``REDACTED``."""

    def __init__(self, path: Path | str, secrets: Iterable[str] = ()):
        self.path = Path(path)
        self.secrets = tuple(s for s in secrets if s)

    def append(
        self, hits: Iterable[SearchHit], *, query: str | None = None, provider: str | None = None
    ) -> int:
        """Write ``hits`` (one line each, in one write); return how many.

        Given the ``query`` asked and the ``provider`` asked, no hits write a :class:`NoHits`
        marker instead, so the query counts as asked. A torn last line is cut off first.
        """
        rows = [self._row(hit) for hit in hits]
        count = len(rows)
        if not rows and query is not None and provider is not None:
            rows = [self._marker(query, provider)]
        if rows:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._cut_torn_tail()
            with self.path.open("a", encoding="utf-8", newline="\n") as f:
                f.write("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
        return count

    def _cut_torn_tail(self) -> None:
        """Make the log end with a newline: cut off an unreadable unterminated last line."""
        if not self.path.is_file():
            return
        with self.path.open("r+b") as f:
            end = f.seek(0, os.SEEK_END)
            if end == 0:
                return
            f.seek(end - 1)
            if f.read(1) == b"\n":
                return
            f.seek(0)
            data = f.read()
            start = data.rfind(b"\n") + 1
            try:
                _entry(json.loads(data[start:]))
            except (ValueError, TypeError):
                log.warning(
                    "%s: cutting off a torn last line (%d bytes; a killed run?)",
                    self.path,
                    end - start,
                )
                f.truncate(start)
            else:
                f.write(b"\n")  # a whole record that only lacks its newline

    def _marker(self, query: str, provider: str) -> dict[str, Any]:
        return {
            "query": redact(query, self.secrets, key_params=False),
            "provider": redact(provider, self.secrets, key_params=False),
            "no_hits": True,
            "retrieved_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        }

    def _row(self, hit: SearchHit) -> dict[str, Any]:
        row = asdict(hit)
        for name in _TEXT_FIELDS:
            # Only the secrets themselves: a result URL may legitimately have a key= parameter.
            row[name] = redact(row[name], self.secrets, key_params=False)
        row["retrieved_at"] = hit.retrieved_at.isoformat()
        return row


def _when(value: Any) -> datetime:
    when = datetime.fromisoformat(value)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _no_hits(row: dict[str, Any]) -> NoHits:
    if row["no_hits"] is not True:
        raise ValueError(f"no_hits must be true, got {row['no_hits']!r}")
    missing = [n for n in _MARKER_FIELDS if n not in row]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    extra = sorted(set(row) - set(_MARKER_FIELDS))
    if extra:
        raise ValueError(f"unknown fields {', '.join(extra)} in a no_hits marker")
    for name in ("query", "provider"):
        if not isinstance(row[name], str):
            raise ValueError(f"{name} must be a string")
    return NoHits(row["query"], row["provider"], _when(row["retrieved_at"]))


def _entry(row: Any) -> SearchHit | NoHits:
    if not isinstance(row, dict):
        raise ValueError(f"expected a JSON object, got {type(row).__name__}")
    if "no_hits" in row:
        return _no_hits(row)
    missing = [n for n in (*_TEXT_FIELDS, "rank", "retrieved_at") if n not in row]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    extra = sorted(set(row) - {*_TEXT_FIELDS, "rank", "retrieved_at"})
    if extra:
        raise ValueError(f"unknown fields {', '.join(extra)}")
    for name in _TEXT_FIELDS:
        if not isinstance(row[name], str):
            raise ValueError(f"{name} must be a string")
    rank = row["rank"]
    if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
        raise ValueError(f"rank must be a whole number from 1, got {rank!r}")
    return SearchHit(**{**row, "retrieved_at": _when(row["retrieved_at"])})


def read_entries(path: Path | str) -> list[SearchHit | NoHits]:
    """Every hit and no-hits marker in a search log, in file order.

    A torn (unterminated) last line is skipped with a warning; any other malformed line is a
    :class:`SourceFormatError` naming the file and line.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"search log {path} not found")
    entries: list[SearchHit | NoHits] = []
    with path.open("rb") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                entries.append(_entry(json.loads(line)))
            except (ValueError, TypeError) as exc:
                if not line.endswith(b"\n"):  # only the last line can lack its newline
                    log.warning("%s:%d: skipping a torn last line (a killed run?)", path, number)
                    continue
                message = f"{path}:{number}: malformed search log line: {exc}"
                raise SourceFormatError(message) from None
    return entries


def read_hits(path: Path | str) -> list[SearchHit]:
    """Every hit in a search log, in file order (no-hits markers left out); see read_entries."""
    return [e for e in read_entries(path) if isinstance(e, SearchHit)]


def recorded_queries(path: Path | str) -> list[str]:
    """The distinct queries asked in a search log (with hits or none), in order first recorded."""
    return list(dict.fromkeys(entry.query for entry in read_entries(path)))


class RecordedProvider(SearchProvider):
    """Replays hits from a search log by (recording provider, query), in rank order.

    ``provider`` picks whose recordings count; unset, a query's latest recording counts,
    whoever made it. A query recorded again (a rank repeats, or a no-hits marker follows)
    replaces the earlier hits; a no-hits marker makes the query known, with no hits.
    ``date_restrict`` and ``language`` are not recorded, so replay ignores them. A missing log
    replays nothing.
    """

    name = "recorded"

    def __init__(self, path: Path | str, provider: str | None = None):
        self.path = Path(path)
        self.provider = provider
        self._hits: dict[tuple[str, str], dict[int, SearchHit]] = {}
        self._latest: dict[str, str] = {}
        if self.path.is_file():
            for entry in read_entries(self.path):
                if isinstance(entry, NoHits):
                    self.add((), query=entry.query, provider=entry.provider)
                else:
                    self.add((entry,))
        else:
            log.debug("recorded search: no log at %s yet", self.path)

    def add(
        self, hits: Iterable[SearchHit], *, query: str | None = None, provider: str | None = None
    ) -> None:
        """Take ``hits`` into the replay index (as if they had been read from the log).

        Given the ``query`` asked and the ``provider`` asked, no hits record that the query was
        asked and had none (as a no-hits marker in the log does), like :meth:`SearchLog.append`.
        """
        hits = list(hits)
        if not hits and query is not None and provider is not None:
            self._hits[(provider, query)] = {}
            self._latest[query] = provider
        for hit in hits:
            key = (hit.provider, hit.query)
            current = self._hits.get(key)
            if current is None or hit.rank in current:
                current = self._hits[key] = {}
            current[hit.rank] = hit
            self._latest[hit.query] = hit.provider

    def knows(self, query: str) -> bool:
        """Whether ``query`` was recorded: with hits, or as asked with none."""
        if self.provider is None:
            return query in self._latest
        return (self.provider, query) in self._hits

    def search(
        self, query: str, *, num: int, date_restrict: str | None = None, language: str | None = None
    ) -> list[SearchHit]:
        """The first ``num`` recorded hits for ``query``; [] if it had none or was never asked."""
        provider = self.provider or self._latest.get(query)
        hits = self._hits.get((provider, query)) if provider else None
        if not hits:
            log.debug("recorded search: no hits for %r in %s", query, self.path)
            return []
        return [hits[rank] for rank in sorted(hits)][:num]
