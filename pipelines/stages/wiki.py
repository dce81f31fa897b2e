"""The ``wiki`` stage: read pages, select fresh events, write articles, rejections and stats."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from builders.drops import DROP_SCHEMA, DROPS
from builders.wikigen.records import ARTICLE_SCHEMA, Article
from builders.wikigen.select import check_content, check_window, window_bounds
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.sources.wiki_settings import WikiSettings
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

ARTICLES = "articles.parquet"


Lookup = Callable[[str], datetime | None]


def _articles(settings: WikiSettings) -> tuple[Iterator[Article], Lookup | None]:
    """Return the configured reader and, when the reader cannot date pages, a date look-up."""
    from pipelines.sources.mediawiki_client import MediaWikiClient

    if settings.reader == "api":
        from pipelines.sources.wiki_api import read_api

        return read_api(MediaWikiClient(settings.api), settings), None
    from pipelines.sources.wiki_dump import read_dump

    dump = settings.dump
    assert dump is not None  # guaranteed by WikiSettings validation
    pages = read_dump(
        dump.path,
        skip_sections=settings.skip_sections,
        creation_dates=dump.creation_dates,
        read_at=dump.snapshot_at,
        workers=dump.workers,
    )
    if dump.creation_dates == "log":
        from pipelines.sources.creation_log import read_creation_log

        assert dump.log_path is not None  # guaranteed by DumpSettings validation
        return pages, read_creation_log(dump.log_path, since=window_bounds(settings)[0]).get
    if dump.creation_dates == "api":
        return pages, MediaWikiClient(settings.api).first_revision_time
    return pages, None


def run_wiki(settings: WikiSettings, *, out: Path) -> StageStats:
    """Select fresh events into ``articles.parquet``; the rest into ``drops.parquet``.

    Pages are streamed: memory holds one page plus a batch of output rows. Creation dates that the
    reader could not supply are looked up only for pages that passed every other rule.
    """
    with stage_run("wiki", out) as run:
        pages, lookup = _articles(settings)
        started = datetime.now(UTC)
        stats = run.stats
        stats.counts.update({"read": 0, "selected": 0, "rejected": 0})
        with (
            TableWriter(run.scratch / ARTICLES, ARTICLE_SCHEMA) as kept,
            TableWriter(run.scratch / DROPS, DROP_SCHEMA) as rejected,
        ):
            for article in progress_iter(pages, "wiki: reading pages"):
                stats.update("read")
                rejection = check_content(article, settings)
                if rejection is None and article.created_at is None and lookup is not None:
                    article = replace(article, created_at=lookup(article.title))
                    stats.update("created_at_looked_up")
                rejection = rejection or check_window(article, settings)
                if rejection is None:
                    kept.write(article.to_row())
                    stats.update("selected")
                else:
                    rejected.write(rejection.to_row())
                    stats.update("rejected")
                    stats.drop(rejection.reason)
        run.extra["reader"] = settings.reader
        run.extra["window"] = [str(settings.created_after), str(settings.created_before)]
        run.extra["started_at"] = started.isoformat(timespec="seconds")
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    c = stats.counts
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(stats.dropped.items())) or "none"
    return (
        f"wiki: {c['read']} pages read, {c['selected']} events selected, "
        f"{c['rejected']} rejected ({reasons}) in {stats.duration_s:.1f} s -> {out}/"
    )
