"""The ``web`` stage: related documents of every selected event, fetched, archived, extracted.

Human-editor links (citations and External links) and search results become candidates; each
unique URL is fetched once (live, appending to the WARC archive, or replayed from it) and its
HTML extracted to text. Every candidate ends with one status and a reason.

Live runs resume: URLs whose outcome is already archived, and queries already in the search log,
are not asked again; only URLs archived as ``rate_limited`` are fetched again.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import anyio

from builders.wikigen.documents import PENDING, candidates, content_hash, mark_text_duplicates
from builders.wikigen.entries import event_id
from builders.wikigen.records import DOCUMENT_SCHEMA, Article, WebDocument
from pipelines.errors import MissingInputError
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.sources.web.extract import Extraction, extract_many, finished
from pipelines.sources.web.fetch import REFETCHED, Fetcher, FetchResult
from pipelines.sources.web.replay import ReplayFetcher, load_index
from pipelines.sources.web.search import (
    RecordedProvider,
    SearchHit,
    SearchLog,
    SearchProvider,
    is_excluded,
    render_queries,
)
from pipelines.sources.web.search.registry import live_provider
from pipelines.sources.web.settings import WebSettings
from pipelines.sources.web.urls import canonical_url
from pipelines.sources.web.warc_archive import WarcArchive
from pipelines.sources.wiki.articles import read_articles
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

log = logging.getLogger(__name__)

DOCUMENTS = "documents.parquet"


class _Searcher:
    """Recorded answers first; in live mode, new queries go to Google and are recorded."""

    def __init__(self, settings: WebSettings):
        self.settings = settings
        self.recorded = RecordedProvider(settings.search_log)
        self.live: SearchProvider | None = None
        if settings.mode == "live" and settings.search.provider != "recorded":
            self.live = live_provider(settings.search.provider, retries=settings.search.retries)

    def search(self, query: str) -> list[SearchHit]:
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


async def _fetch(settings: WebSettings, urls: Sequence[str]) -> dict[str, FetchResult]:
    if settings.mode == "replay":
        async with ReplayFetcher(settings.archive) as replay:
            return {r.url: r for r in await replay.fetch_all(urls)}
    archived = load_index(settings.archive)
    done = {u: r for u, r in archived.items() if r.status not in REFETCHED}
    todo = [u for u in urls if u not in done]
    again = sum(u in archived for u in todo)
    log.info(
        "web: %d URLs archived already, %d to fetch, %d of them again (archived as %s)",
        len(urls) - len(todo),
        len(todo),
        again,
        " or ".join(REFETCHED),
    )
    archive = WarcArchive(settings.archive)
    try:
        async with Fetcher(settings.fetch, archive) as fetcher:
            fetched = await fetcher.fetch_all(todo)
    finally:
        archive.close()
    return {**{u: done[u] for u in urls if u in done}, **{r.url: r for r in fetched}}


def _settle(
    doc: WebDocument, fetched: FetchResult | None, extracted: Extraction | None
) -> WebDocument:
    if doc.status != PENDING:
        return doc
    if fetched is None:
        return replace(doc, status="error", reason="not fetched")
    common = {
        "final_url": fetched.final_url,
        "http_status": fetched.http_status,
        "fetched_at": fetched.fetched_at,
    }
    if fetched.status != "ok":
        return replace(doc, status=fetched.status, reason=fetched.reason, **common)
    assert extracted is not None
    return replace(
        doc,
        status=extracted.status,
        reason=extracted.reason,
        text=extracted.text,
        title=extracted.title or doc.title,
        word_count=extracted.word_count,
        length_unit=extracted.length_unit,
        date=extracted.date,
        language=extracted.language,
        content_hash=content_hash(extracted.text) if extracted.text else "",
        **common,
    )


def _documents(settings: WebSettings, events: list[Article]) -> tuple[list[WebDocument], int]:
    """Every candidate of every event, settled with one status; and how many URLs were fetched."""
    searcher = _Searcher(settings)
    excluded = settings.search.exclude_domains
    docs: list[WebDocument] = []
    for article in progress_iter(events, "web: collecting candidates", total=len(events)):
        fields = {
            "title": article.title,
            "year": str(article.created_at.year) if article.created_at else "",
            "location": article.infobox.get("location", ""),
        }
        hits = [
            h for q in render_queries(settings.search.queries, fields) for h in searcher.search(q)
        ]
        docs += candidates(
            event_id(article), article, hits, canonical_url, lambda url: is_excluded(url, excluded)
        )
    urls = list(dict.fromkeys(d.url for d in docs if d.status == PENDING))
    fetched = anyio.run(_fetch, settings, urls)
    ok = [u for u in urls if u in fetched and fetched[u].status == "ok"]
    plain = {u for u in ok if fetched[u].content_type == "text/plain"}
    pages = [(u, fetched[u].text, fetched[u].final_url or u) for u in ok if u not in plain]
    extracted = {
        e.doc_id: e
        for e in progress_iter(
            extract_many(pages, settings.extract), "web: extracting", total=len(pages)
        )
    }
    extracted.update({u: finished(u, fetched[u].text.strip(), settings.extract) for u in plain})
    settled: list[WebDocument] = []
    for event in dict.fromkeys(d.event_id for d in docs):
        group = [
            _settle(d, fetched.get(d.url), extracted.get(d.url))
            for d in docs
            if d.event_id == event
        ]
        settled += mark_text_duplicates(group)
    return settled, len(urls)


def run_web(settings: WebSettings, *, articles: Path, out: Path) -> StageStats:
    """Collect, fetch and extract the related documents; write ``documents.parquet`` and stats."""
    if settings.mode == "replay":
        for needed in (settings.archive, settings.search_log):
            if not needed.exists():
                raise MissingInputError(
                    f"replay needs {needed}; record it with a live run, or for the snapshot "
                    "with 'benchsmith snapshot record-web'"
                )
    with stage_run("web", out) as run:
        events = read_articles(articles)
        settled, fetched = _documents(settings, events)
        with TableWriter(run.scratch / DOCUMENTS, DOCUMENT_SCHEMA) as writer:
            for doc in settled:
                writer.write(doc.to_row())
        by = Counter((d.origin, d.status) for d in settled)
        run.stats.counts.update(
            {"events": len(events), "candidates": len(settled), "urls_fetched": fetched}
        )
        run.stats.counts.update({f"{o}_{s}": n for (o, s), n in sorted(by.items())})
        for doc in settled:
            if doc.status != "ok":
                run.stats.drop(doc.status)
        run.extra["mode"] = settings.mode
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    ok = sum(v for k, v in stats.counts.items() if k.endswith("_ok"))
    return (
        f"web: {stats.counts['candidates']} candidate documents for {stats.counts['events']} "
        f"events, {ok} ok, {sum(stats.dropped.values())} dropped -> {out}/"
    )
