"""The search log: hits appended as JSON lines, and a provider that replays them offline.

One line per hit: ``{"query", "provider", "rank", "url", "title", "snippet", "retrieved_at"}``
with ``retrieved_at`` in ISO 8601 (UTC). A query with no hits leaves no line.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipelines.errors import MissingInputError, SourceFormatError
from pipelines.sources.search.base import SearchHit, SearchProvider, redact

log = logging.getLogger(__name__)

_TEXT_FIELDS = ("query", "provider", "url", "title", "snippet")


class SearchLog:
    """Appends hits to a JSONL file, with ``secrets`` replaced by ``REDACTED``."""

    def __init__(self, path: Path | str, secrets: Iterable[str] = ()):
        self.path = Path(path)
        self.secrets = tuple(s for s in secrets if s)

    def append(self, hits: Iterable[SearchHit]) -> int:
        """Write ``hits`` (one line each, in one write); return how many."""
        lines = [json.dumps(self._row(hit), ensure_ascii=False) + "\n" for hit in hits]
        if lines:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8", newline="\n") as f:
                f.write("".join(lines))
        return len(lines)

    def _row(self, hit: SearchHit) -> dict[str, Any]:
        row = asdict(hit)
        for name in _TEXT_FIELDS:
            # Only the secrets themselves: a result URL may legitimately have a key= parameter.
            row[name] = redact(row[name], self.secrets, key_params=False)
        row["retrieved_at"] = hit.retrieved_at.isoformat()
        return row


def _hit(row: Any) -> SearchHit:
    if not isinstance(row, dict):
        raise ValueError(f"expected a JSON object, got {type(row).__name__}")
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
    when = datetime.fromisoformat(row["retrieved_at"])
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return SearchHit(**{**row, "retrieved_at": when})


def read_hits(path: Path | str) -> list[SearchHit]:
    """Every hit in a search log, in file order; errors name the file and line."""
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"search log {path} not found")
    hits = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                hits.append(_hit(json.loads(line)))
            except (ValueError, TypeError) as exc:
                message = f"{path}:{number}: malformed search log line: {exc}"
                raise SourceFormatError(message) from None
    return hits


def recorded_queries(path: Path | str) -> list[str]:
    """The distinct queries in a search log, in the order first recorded."""
    return list(dict.fromkeys(hit.query for hit in read_hits(path)))


class RecordedProvider(SearchProvider):
    """Replays hits from a search log by (recording provider, query), in rank order.

    ``provider`` picks whose recordings count; unset, a query's latest recording counts,
    whoever made it. A query recorded again (a rank repeats) replaces the earlier hits.
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
            self.add(read_hits(self.path))
        else:
            log.debug("recorded search: no log at %s yet", self.path)

    def add(self, hits: Iterable[SearchHit]) -> None:
        """Take ``hits`` into the replay index (as if they had been read from the log)."""
        for hit in hits:
            key = (hit.provider, hit.query)
            current = self._hits.get(key)
            if current is None or hit.rank in current:
                current = self._hits[key] = {}
            current[hit.rank] = hit
            self._latest[hit.query] = hit.provider

    def knows(self, query: str) -> bool:
        """Whether ``query`` has recorded hits."""
        if self.provider is None:
            return query in self._latest
        return (self.provider, query) in self._hits

    def search(
        self, query: str, *, num: int, date_restrict: str | None = None, language: str | None = None
    ) -> list[SearchHit]:
        """The first ``num`` recorded hits for ``query``; [] if it was never recorded."""
        provider = self.provider or self._latest.get(query)
        hits = self._hits.get((provider, query)) if provider else None
        if not hits:
            log.debug("recorded search: no hits for %r in %s", query, self.path)
            return []
        return [hits[rank] for rank in sorted(hits)][:num]
