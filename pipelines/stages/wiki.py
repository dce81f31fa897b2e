"""The ``wiki`` stage: read pages, select fresh events, write articles, rejections and stats."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from builders.drops import DROP_SCHEMA, DROPS, Drop
from builders.wikigen.records import ARTICLE_SCHEMA, Article
from builders.wikigen.select import check_content, check_window, window_bounds
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.sources.wiki.settings import WikiSettings
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

ARTICLES = "articles.parquet"


Lookup = Callable[[str], datetime | None]
SUSPECT_SHOWN = 50
"""Suspect pages listed by name in ``stats.json`` (all are counted)."""


def _articles(
    settings: WikiSettings, extra: dict[str, object]
) -> tuple[Iterator[Article | Drop], Lookup | None]:
    """Return the configured reader and, when the reader cannot date pages, a date look-up;
    what a candidate-first read touched goes to ``extra``."""
    from pipelines.sources.wiki.mediawiki_client import MediaWikiClient

    if settings.reader == "api" or (settings.reader == "html" and settings.html.source == "rest"):
        from pipelines.sources.wiki.api import read_api

        return read_api(MediaWikiClient(settings.api), settings), None
    if settings.reader == "html":
        return _enterprise(settings)
    from pipelines.sources.wiki.dump import read_dump

    dump = settings.dump
    assert dump is not None  # guaranteed by WikiSettings validation
    created: dict[str, datetime] | None = None
    if dump.creation_dates == "log":
        from pipelines.sources.wiki.creation_log import read_creation_log

        assert dump.log_path is not None  # guaranteed by DumpSettings validation
        created = read_creation_log(dump.log_path, since=window_bounds(settings)[0])
    pages = read_dump(
        dump.path,
        skip_sections=settings.skip_sections,
        language=settings.language,
        variant=settings.variant,
        external_links=[settings.external_links_section]
        if settings.external_links_section
        else None,
        creation_dates=dump.creation_dates,
        read_at=dump.snapshot_at,
        workers=dump.workers,
        page_time_limit_s=settings.page_time_limit_s,
        slow_page_s=settings.slow_page_s,
        pages=_candidates(settings, created, extra) if dump.index_path else None,
        cheap_rules_first=True,
    )
    if created is not None:
        return pages, created.get
    if dump.creation_dates == "api":
        return pages, MediaWikiClient(settings.api).first_revision_time
    return pages, None


def _candidates(
    settings: WikiSettings, created: dict[str, datetime] | None, extra: dict[str, object]
) -> Iterator[tuple[object, object]]:
    """The candidate pages of a multistream dump: titles created in the window (creation log)
    and those of ``candidates_path``, read from their bz2 streams only; what was touched goes
    to ``extra['multistream']`` when reading ends."""
    from pipelines.sources.wiki.multistream import StreamStats, candidate_pages, find_in_index

    dump = settings.dump
    assert dump is not None and dump.index_path is not None
    end = window_bounds(settings)[1]
    titles = {t for t, at in (created or {}).items() if at < end}
    if dump.candidates_path is not None:
        lines = dump.candidates_path.read_text("utf-8").splitlines()
        titles |= {line.strip() for line in lines if line.strip()}
    lookup = find_in_index(dump.index_path, titles)
    stats = StreamStats()
    yield from candidate_pages(dump.path, lookup, stats)
    extra["multistream"] = {
        "index_lines": lookup.index_lines,
        "candidates": len(titles),
        "not_in_index": len(lookup.missing),
        "streams_read": stats.streams_read,
        "pages_seen": stats.pages_seen,
        "pages_read": stats.pages_read,
    }


def _enterprise(settings: WikiSettings) -> tuple[Iterator[Article | Drop], Lookup | None]:
    """An Enterprise HTML dump's articles, and how candidates get their creation dates."""
    from pipelines.sources.wiki.article import log_slow
    from pipelines.sources.wiki.enterprise import read_enterprise
    from pipelines.sources.wiki.mediawiki_client import MediaWikiClient

    html = settings.html
    assert html.path is not None  # guaranteed by HtmlSettings validation
    read = read_enterprise(
        html.path,
        settings.rules(),
        read_at=html.snapshot_at,
        page_time_limit_s=settings.page_time_limit_s,
    )
    pages = log_slow(read, settings.slow_page_s, str(html.path))
    if html.creation_dates == "log":
        from pipelines.sources.wiki.creation_log import read_creation_log

        assert html.log_path is not None
        return pages, read_creation_log(html.log_path, since=window_bounds(settings)[0]).get
    return pages, MediaWikiClient(settings.api).first_revision_time


def run_wiki(settings: WikiSettings, *, out: Path) -> StageStats:
    """Select fresh events into ``articles.parquet``; the rest into ``drops.parquet``.

    Pages are streamed: memory holds one page plus a batch of output rows. Creation dates that the
    reader could not supply are looked up only for pages that passed every other rule.
    """
    with stage_run("wiki", out) as run:
        pages, lookup = _articles(settings, run.extra)
        started = datetime.now(UTC)
        stats = run.stats
        stats.counts.update({"read": 0, "selected": 0, "rejected": 0})
        with (
            TableWriter(run.scratch / ARTICLES, ARTICLE_SCHEMA) as kept,
            TableWriter(run.scratch / DROPS, DROP_SCHEMA) as rejected,
        ):
            for article in progress_iter(pages, "wiki: reading pages"):
                stats.update("read")
                if isinstance(article, Drop):  # a page that could not be read at all
                    rejected.write(article.to_row())
                    stats.update("rejected")
                    stats.drop(article.reason)
                    continue
                _fidelity(stats, article, run.extra)
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


def _fidelity(stats: StageStats, article: Article, extra: dict[str, object]) -> None:
    """Add the page's fidelity figures to the stage's, and name it when it looks suspect."""
    if article.is_redirect:
        return
    f = article.fidelity
    stats.update("pages_rendered")
    stats.update("source_headings", f.source_headings)
    stats.update("headings_found", f.headings)
    stats.update("leftover_markup", f.leftover_markup)
    stats.update("words_kept", article.word_count)
    if f.suspect:
        stats.update("suspect_pages")
        shown = extra.setdefault("suspect_pages", [])
        assert isinstance(shown, list)
        if len(shown) < SUSPECT_SHOWN:
            shown.append({"title": article.title, "page_id": article.page_id, "why": f.suspect})


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    c = stats.counts
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(stats.dropped.items())) or "none"
    suspect = f", {c['suspect_pages']} suspect renderings" if c.get("suspect_pages") else ""
    return (
        f"wiki: {c['read']} pages read, {c['selected']} events selected, "
        f"{c['rejected']} rejected ({reasons}){suspect} in {stats.duration_s:.1f} s -> {out}/"
    )
