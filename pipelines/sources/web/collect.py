"""The web stage's documents: every candidate of every event (human-editor links and search
results), each unique URL fetched once (live, appending to the WARC archive, or replayed from
it) and its HTML extracted to text, every candidate settled with one status and a reason. A
human-editor link lost live is looked for in the archives (:mod:`.archives`)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import anyio

from builders.wikigen.documents import PENDING, candidates, content_hash, mark_text_duplicates
from builders.wikigen.entries import event_id
from builders.wikigen.records import Article, WebDocument
from pipelines.progress import progress_iter
from pipelines.sources.web.archives import (
    RECOVERABLE,
    Copy,
    Recovery,
    Wanted,
    citation_date,
    recover_all,
)
from pipelines.sources.web.extract import Extraction, extract_many, finished
from pipelines.sources.web.fetch import REFETCHED, Fetcher, FetchResult
from pipelines.sources.web.replay import ReplayFetcher, Resuming, load_index
from pipelines.sources.web.search import is_excluded, render_queries
from pipelines.sources.web.search.plan import article_fields
from pipelines.sources.web.searcher import Searcher
from pipelines.sources.web.settings import WebSettings
from pipelines.sources.web.urls import canonical_url
from pipelines.sources.web.warc_archive import WarcArchive

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Collected:
    """What the web stage collected: every candidate settled, how many URLs it fetched, and
    how many human-editor links were lost live and looked for in the archives (``lost``),
    recovered (``recovered``), and tried and recovered per archive (``<archive>_tried``,
    ``<archive>_recovered``); a link counts once per document."""

    documents: list[WebDocument]
    urls: int
    archives: Counter[str] = field(default_factory=Counter)


Wants = dict[str, Wanted]
"""The archive search of each human-editor candidate, by doc id."""


async def fetch_documents(
    settings: WebSettings, urls: Sequence[str], docs: list[WebDocument], wants: Wants
) -> tuple[dict[str, FetchResult], dict[Wanted, Recovery]]:
    """Each URL's fetch: replayed from the archive, or live with what is archived already
    (except outcomes fetched again) taken from the archive; then, for every human-editor link
    that ended in a :data:`RECOVERABLE` status, how looking for an archived copy ended."""
    if settings.mode == "replay":
        async with ReplayFetcher(settings.archive, settings.fetch) as replay:
            results = {r.url: r for r in await replay.fetch_all(urls)}
            lost = _lost(results, docs, wants)
            return results, await recover_all(replay, settings.archives, lost)
    archive = WarcArchive(settings.archive)
    try:
        async with Fetcher(settings.fetch, archive) as fetcher:
            source = Resuming(fetcher, load_index(settings.archive, settings.fetch))
            todo = [u for u in urls if u not in source.done]
            log.info(
                "web: %d URLs archived already, %d to fetch (archived outcomes %s are fetched "
                "again)",
                len(urls) - len(todo),
                len(todo),
                " or ".join(REFETCHED),
            )
            results = {r.url: r for r in await source.fetch_all(urls)}

            def link(wanted: Wanted, copy: Copy) -> None:
                if copy.memento_url in source.fresh:
                    at = copy.memento_at.isoformat() if copy.memento_at else ""
                    archive.write_memento(copy.memento_url, wanted.url, at, copy.archive)

            lost = _lost(results, docs, wants)
            return results, await recover_all(source, settings.archives, lost, link)
    finally:
        archive.close()


def _lost(results: dict[str, FetchResult], docs: list[WebDocument], wants: Wants) -> list[Wanted]:
    """The archive searches of the human-editor links whose live fetch ended recoverable."""
    return [
        wants[d.doc_id]
        for d in docs
        if d.doc_id in wants and d.url in results and results[d.url].status in RECOVERABLE
    ]


def archive_searches(
    settings: WebSettings, events: list[Article], docs: list[WebDocument]
) -> Wants:
    """For each pending human-editor candidate, what to look for in the archives: its
    citation's ``archive-url`` and ``archive-date``, aimed at its ``access-date`` or else the
    event's date. Empty when ``web.archives.order`` is."""
    if not settings.archives.order:
        return {}
    by_event = {event_id(a): a for a in events}
    wants: Wants = {}
    for doc in docs:
        if doc.origin != "human" or doc.status != PENDING:
            continue
        article = by_event[doc.event_id]
        ref = next((r for r in article.references if r.url == doc.url), None)
        aim = citation_date(ref.access_date) if ref else None
        if aim is None and article.created_at is not None:
            aim = article.created_at.date()
        archived = (
            (ref.archive_url, ref.archive_date) if ref and ref.archive_url != doc.url else ("", "")
        )
        wants[doc.doc_id] = Wanted(doc.url, *archived, aim=aim)
    return wants


def _settle(
    doc: WebDocument,
    fetched: FetchResult | None,
    extracted: dict[str, Extraction],
    recovery: Recovery | None,
) -> WebDocument:
    """A pending candidate with the outcome of its fetch and extraction, or of its archived
    copy's when the live link was lost and a copy was found; others as they are."""
    if doc.status != PENDING:
        return doc
    if fetched is None:
        return replace(doc, status="error", reason="not fetched")
    if recovery is None:
        return _outcome(doc, fetched, extracted.get(fetched.url))
    copy = recovery.copy
    if copy is None:
        lost = _outcome(doc, fetched, None)
        note = recovery.note()
        return replace(lost, reason=f"{lost.reason}; {note}") if note else lost
    settled = _outcome(doc, copy.result, extracted.get(copy.memento_url))
    why = f"{copy.archive} copy of a link that ended {fetched.status} ({fetched.reason})"
    return replace(
        settled,
        reason="; ".join(part for part in (why, settled.reason) if part),
        archived=True,
        archive=copy.archive,
        memento_at=copy.memento_at,
    )


def _outcome(doc: WebDocument, fetched: FetchResult, extracted: Extraction | None) -> WebDocument:
    """``doc`` settled by one fetch and, when it is ``ok``, the extraction of its text."""
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
) -> Collected:
    """Every candidate of every event, settled with one status; how many URLs were fetched;
    how many dead links were tried in each archive and recovered. ``searcher`` (by default a
    new one) answers the queries; its ``stats()`` tell the run's search story afterwards."""
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
    wants = archive_searches(settings, events, docs)
    fetched, recoveries = anyio.run(fetch_documents, settings, urls, docs, wants)
    copies = {r.copy.memento_url: r.copy.result for r in recoveries.values() if r.copy}
    extracted = _extract(settings, {**{u: fetched[u] for u in urls if u in fetched}, **copies})
    settled: list[WebDocument] = []
    counts: Counter[str] = Counter()
    for event in dict.fromkeys(d.event_id for d in docs):
        group = []
        for d in docs:
            if d.event_id != event:
                continue
            recovery = recoveries.get(wants[d.doc_id]) if d.doc_id in wants else None
            group.append(_settle(d, fetched.get(d.url), extracted, recovery))
            if recovery is not None:
                counts["lost"] += 1
                counts.update(f"{a}_tried" for a in recovery.tried)
                if recovery.copy is not None:
                    counts.update(("recovered", f"{recovery.copy.archive}_recovered"))
        settled += mark_text_duplicates(group)
    return Collected(settled, len(urls), counts)


def _extract(settings: WebSettings, fetched: dict[str, FetchResult]) -> dict[str, Extraction]:
    """The extraction of every ``ok`` fetch, by URL: HTML through the extractor, plain text
    as it is."""
    ok = [u for u, r in fetched.items() if r.status == "ok"]
    plain = {u for u in ok if fetched[u].content_type == "text/plain"}
    pages = [(u, fetched[u].text, fetched[u].final_url or u) for u in ok if u not in plain]
    extracted = {
        e.doc_id: e
        for e in progress_iter(
            extract_many(pages, settings.extract), "web: extracting", total=len(pages)
        )
    }
    extracted.update({u: finished(u, fetched[u].text.strip(), settings.extract) for u in plain})
    return extracted
