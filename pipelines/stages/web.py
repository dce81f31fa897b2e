"""The ``web`` stage: related documents of every selected event, fetched, archived, extracted.

Human-editor links (citations and External links) and search results become candidates; each
unique URL is fetched once (live, appending to the WARC archive, or replayed from it) and its
HTML extracted to text. A human-editor link that ended ``dead``, ``error`` or ``not_html`` is
looked for in the archives of ``web.archives.order`` (its citation's ``archive-url``, the Wayback
Machine); ``archive_lost`` counts those, ``archive_recovered`` the ones an archived copy
replaced, ``archive_<archive>_tried`` and ``archive_<archive>_recovered`` the same per archive.
Every candidate ends with one status and a reason; events left without a usable document (no
candidate, or none fetched) are counted as ``events_without_documents``.

Live runs resume: URLs whose outcome is already archived, and queries already in the search log,
are not asked again; only URLs archived as ``rate_limited`` are fetched again.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from builders.wikigen.entries import event_id
from builders.wikigen.records import DOCUMENT_SCHEMA, Article, WebDocument
from pipelines.errors import MissingInputError
from pipelines.outputs import TableWriter
from pipelines.sources.web.collect import collect_documents
from pipelines.sources.web.searcher import Searcher
from pipelines.sources.web.settings import WebSettings
from pipelines.sources.wiki.articles import read_articles
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

DOCUMENTS = "documents.parquet"


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
        searcher = Searcher(settings)
        collected = collect_documents(settings, events, searcher)
        settled = collected.documents
        with TableWriter(run.scratch / DOCUMENTS, DOCUMENT_SCHEMA) as writer:
            for doc in settled:
                writer.write(doc.to_row())
        by = Counter((d.origin, d.status) for d in settled)
        run.stats.counts.update(
            {"events": len(events), "candidates": len(settled), "urls_fetched": collected.urls}
        )
        run.stats.counts.update({f"archive_{k}": n for k, n in sorted(collected.archives.items())})
        run.stats.counts.update({f"{o}_{s}": n for (o, s), n in sorted(by.items())})
        for doc in settled:
            if doc.status != "ok":
                run.stats.drop(doc.status)
        if bare := _events_without_documents(events, settled):
            run.stats.update("events_without_documents", bare)
        run.extra["mode"] = settings.mode
        run.extra["search"] = searcher.stats()
    return run.stats


def _events_without_documents(events: list[Article], settled: list[WebDocument]) -> int:
    """Events left without a usable document: no candidate at all, or none fetched ``ok``."""
    usable = {d.event_id for d in settled if d.status == "ok"}
    return sum(event_id(a) not in usable for a in events)


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    ok = sum(v for k, v in stats.counts.items() if k.endswith("_ok"))
    bare = stats.counts.get("events_without_documents", 0)
    note = f" ({bare} without a usable document)" if bare else ""
    lost = stats.counts.get("archive_lost", 0)
    archived = f", {stats.counts.get('archive_recovered', 0)} of {lost} lost links from archives"
    return (
        f"web: {stats.counts['candidates']} candidate documents for {stats.counts['events']} "
        f"events{note}, {ok} ok{archived if lost else ''}, {sum(stats.dropped.values())} "
        f"dropped -> {out}/"
    )
