"""The provider chain: ``web.search.providers`` tried in order for every query.

A provider is built the first time a query reaches it. One that fails for good
(:class:`~pipelines.sources.web.search.base.SearchUnavailable`: no key, key refused, 410,
quota spent) is set aside for the rest of the run, and the next one serves. One that fails a
single query (retries spent, a malformed answer) is skipped for that query only. A query no
provider answers is failed, with every provider's reason, and the run goes on; it is not
recorded, so the next run asks it again.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pipelines.sources.web.search.base import (
    SearchError,
    SearchHit,
    SearchProvider,
    SearchUnavailable,
)

log = logging.getLogger(__name__)


@dataclass
class ChainReport:
    """What the chain did this run, for the stage's stats."""

    answered: Counter[str] = field(default_factory=Counter)
    """Queries answered, by provider."""
    failed: dict[str, str] = field(default_factory=dict)
    """Queries no provider answered, with the reasons."""
    unavailable: dict[str, str] = field(default_factory=dict)
    """Providers set aside for the run, with the reason."""
    unsupported: dict[str, list[str]] = field(default_factory=dict)
    """Settings a provider could not honour as given, and what it did instead."""


class AllProvidersUnavailable(SearchUnavailable):
    """No provider of ``web.search.providers`` can serve: the run cannot search at all."""


class ProviderChain:
    """Ask ``names`` in order, each built by ``build(name)`` when first needed."""

    def __init__(
        self,
        names: Sequence[str],
        build: Callable[[str], SearchProvider],
        *,
        date_restrict: str | None = None,
        language: str | None = None,
    ):
        self.names = list(names)
        self._build = build
        self._restrict = date_restrict
        self._language = language
        self._built: dict[str, SearchProvider] = {}
        self.report = ChainReport()

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every built provider's secrets."""
        return tuple(s for p in self._built.values() for s in p.secrets)

    def _provider(self, name: str) -> SearchProvider | None:
        if name in self.report.unavailable:
            return None
        if name not in self._built:
            try:
                provider = self._built[name] = self._build(name)
            except SearchUnavailable as exc:
                self._set_aside(name, str(exc))
                return None
            notes = provider.unsupported(date_restrict=self._restrict, language=self._language)
            if notes:
                self.report.unsupported[name] = notes
                for note in notes:
                    log.warning("search: %s: %s", name, note)
        return self._built[name]

    def _set_aside(self, name: str, reason: str) -> None:
        self.report.unavailable[name] = reason
        rest = [n for n in self.names if n not in self.report.unavailable]
        after = f"; {rest[0]} serves from now on" if rest else ""
        log.warning("search: %s set aside for this run: %s%s", name, reason, after)

    def search(self, query: str, *, num: int) -> tuple[list[SearchHit], str] | None:
        """The first answer to ``query`` and who gave it; ``None`` when no provider answered
        (the reasons are in :attr:`report`). Raises :class:`AllProvidersUnavailable` when no
        provider can serve at all."""
        reasons: list[str] = []
        for name in self.names:
            provider = self._provider(name)
            if provider is None:
                continue
            try:
                hits = provider.search(
                    query, num=num, date_restrict=self._restrict, language=self._language
                )
            except SearchUnavailable as exc:
                self._set_aside(name, str(exc))
                continue
            except SearchError as exc:
                reasons.append(f"{name}: {exc}")
                log.warning("search: %s failed query %r: %s", name, query, exc)
                continue
            self.report.answered[name] += 1
            return hits, name
        if all(n in self.report.unavailable for n in self.names):
            why = "; ".join(f"{n}: {r}" for n, r in self.report.unavailable.items())
            raise AllProvidersUnavailable(
                f"no provider of web.search.providers ({', '.join(self.names) or 'none'}) can "
                f"serve: {why or 'the list is empty'}"
            )
        self.report.failed[query] = "; ".join(reasons)
        return None
