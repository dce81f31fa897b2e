"""The web stage's search: recorded answers first; in live mode, a query the log does not know
goes to the live provider, and its answer is recorded."""

from __future__ import annotations

from pipelines.sources.web.search import RecordedProvider, SearchHit, SearchLog, SearchProvider
from pipelines.sources.web.search.registry import live_provider
from pipelines.sources.web.settings import WebSettings


class Searcher:
    """Recorded answers first; in live mode, new queries go to Google and are recorded."""

    def __init__(self, settings: WebSettings) -> None:
        self.settings = settings
        self.recorded = RecordedProvider(settings.search_log)
        self.live: SearchProvider | None = None
        if settings.mode == "live" and settings.search.provider != "recorded":
            self.live = live_provider(settings.search.provider, retries=settings.search.retries)

    def search(self, query: str) -> list[SearchHit]:
        """The hits for ``query``: the recorded ones, or for a query new to a live run, the live
        provider's, appended to the search log."""
        s = self.settings.search
        options = {
            "num": s.results_per_query,
            "date_restrict": s.date_restrict,
            "language": s.language,
        }
        hits = self.recorded.search(query, **options)
        if hits or self.live is None or self.recorded.knows(query):
            return hits
        hits = self.live.search(query, **options)
        log = SearchLog(self.settings.search_log, secrets=self.live.secrets)
        log.append(hits, query=query, provider=self.live.name)
        self.recorded.add(hits, query=query, provider=self.live.name)
        return hits
