"""Choose the wiki stage's reader from its settings: the MediaWiki API, an XML dump (whole, or
candidate-first through a multistream index) or an Enterprise HTML dump; and, where the reader
cannot date pages, how their creation dates are looked up."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime

from builders.drops import Drop
from builders.wikigen.records import Article
from builders.wikigen.select import window_bounds
from pipelines.errors import ParamsError
from pipelines.sources.wiki.settings import WikiSettings

Lookup = Callable[[str], datetime | None]
"""A page's creation date by title (``None`` when it has none)."""


def read_pages(
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
    check_language(settings)
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
        tables_as_text=settings.tables == "text",
    )
    if created is not None:
        return pages, created.get
    if dump.creation_dates == "api":
        return pages, MediaWikiClient(settings.api).first_revision_time
    return pages, None


def check_language(settings: WikiSettings) -> None:
    """Raise :class:`ParamsError` when the dump's ``xml:lang`` is not ``wiki.language``, naming
    the keys to set (:meth:`WikiSettings.language_mismatch`): read with another language's
    section names, a wiki's pages keep their reference sections as text and lose their
    external links, silently. Other readers are checked as they read (the API's siteinfo)."""
    if settings.reader != "dump" or settings.dump is None:
        return
    from pipelines.sources.wiki.dump import dump_language

    path = settings.dump.path
    problem = settings.language_mismatch(dump_language(path), f"the dump {path}")
    if problem:
        raise ParamsError(problem)


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
