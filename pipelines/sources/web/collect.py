"""The web stage's documents: every candidate of every event (human-editor links and search
results), each unique URL fetched once (live, appending to the WARC archive, or replayed from
it) and its HTML extracted to text, every candidate settled with one status and a reason."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

import anyio

from builders.wikigen.documents import PENDING, candidates, content_hash, mark_text_duplicates
from builders.wikigen.entries import event_id
from builders.wikigen.records import Article, WebDocument
from pipelines.progress import progress_iter
from pipelines.sources.web.extract import Extraction, extract_many, finished
from pipelines.sources.web.fetch import REFETCHED, Fetcher, FetchResult
from pipelines.sources.web.replay import ReplayFetcher, load_index
from pipelines.sources.web.search import is_excluded, render_queries
from pipelines.sources.web.search.plan import article_fields
from pipelines.sources.web.searcher import Searcher
from pipelines.sources.web.settings import WebSettings
from pipelines.sources.web.urls import canonical_url
from pipelines.sources.web.warc_archive import WarcArchive

log = logging.getLogger(__name__)


async def _fetch(settings: WebSettings, urls: Sequence[str]) -> dict[str, FetchResult]:
    """Each URL's fetch: replayed from the archive, or live with what is archived already
    (except outcomes fetched again) taken from the archive."""
    if settings.mode == "replay":
        async with ReplayFetcher(settings.archive, settings.fetch) as replay:
            return {r.url: r for r in await replay.fetch_all(urls)}
    archived = load_index(settings.archive, settings.fetch)
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
    """A pending candidate with the outcome of its fetch and extraction; others as they are."""
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


def collect_documents(
    settings: WebSettings, events: list[Article], searcher: Searcher | None = None
) -> tuple[list[WebDocument], int]:
    """Every candidate of every event, settled with one status; and how many URLs were fetched.

    ``searcher`` (by default a new one) answers the queries; its ``stats()`` tell the run's
    search story afterwards."""
    searcher = searcher or Searcher(settings)
    excluded = settings.search.exclude_domains
    docs: list[WebDocument] = []
    for article in progress_iter(events, "web: collecting candidates", total=len(events)):
        queries = render_queries(settings.search.queries, article_fields(article))
        hits = [h for q in queries for h in searcher.search(q)]
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
