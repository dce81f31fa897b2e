"""The web stage's search: recorded answers first; in live mode, a query the log does not know
goes to the provider chain, and its answer is recorded with the provider that gave it."""

from __future__ import annotations

from typing import Any

from pipelines.sources.web.search import RecordedProvider, SearchHit, SearchLog
from pipelines.sources.web.search.chain import ProviderChain
from pipelines.sources.web.search.registry import live_provider
from pipelines.sources.web.settings import WebSettings


class Searcher:
    """Recorded answers first; in live mode, new queries go to the provider chain and are
    recorded. A query no provider answered is counted as failed and asked again next run."""

    def __init__(self, settings: WebSettings) -> None:
        self.settings = settings
        s = settings.search
        self.recorded = RecordedProvider(settings.search_log)
        self.replayed = 0
        self.chain: ProviderChain | None = None
        if settings.mode == "live" and s.providers:
            self.chain = ProviderChain(
                s.providers,
                lambda name: live_provider(name, s),
                date_restrict=s.date_restrict,
                language=s.language,
            )

    def search(self, query: str) -> list[SearchHit]:
        """The hits for ``query``: the recorded ones, or for a query new to a live run, the
        first provider's to answer, appended to the search log ([] when none answered)."""
        num = self.settings.search.results_per_query
        if self.recorded.knows(query) or self.chain is None:
            self.replayed += self.recorded.knows(query)
            return self.recorded.search(query, num=num)
        answer = self.chain.search(query, num=num)
        if answer is None:
            return []
        hits, provider = answer
        SearchLog(self.settings.search_log, secrets=self.chain.secrets).append(
            hits, query=query, provider=provider
        )
        self.recorded.add(hits, query=query, provider=provider)
        return hits

    def stats(self) -> dict[str, Any]:
        """What the search did this run: queries replayed from the log, answered live by each
        provider, failed (with reasons), providers set aside, settings not honoured."""
        report = self.chain.report if self.chain else None
        return {
            "providers": list(self.settings.search.providers) if self.chain else [],
            "replayed": self.replayed,
            "answered": dict(report.answered) if report else {},
            "failed": dict(report.failed) if report else {},
            "unavailable": dict(report.unavailable) if report else {},
            "unsupported": dict(report.unsupported) if report else {},
            "exclude_domains": "dropped after the answer, for every provider",
        }
