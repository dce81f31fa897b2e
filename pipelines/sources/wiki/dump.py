"""Stream a MediaWiki XML export or pages-articles dump into Article records in constant memory.

Creation dates (``creation_dates``):

- ``history``: the earliest ``<revision>`` timestamp of each page. Right for exports that carry
  full history (Special:Export with history, ``pages-meta-history`` dumps).
- ``log``: left empty here; the wiki stage looks candidates up in a page-creation log dump
  (:mod:`creation_log`).
- ``api``: left empty here; the wiki stage asks the API about candidate pages only.

A ``pages-articles`` dump keeps only the latest revision, so ``history`` would date every page by
its last edit; use ``log`` or ``api`` there. Titles are never used to guess a date.
"""

from __future__ import annotations

import logging
import multiprocessing
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TypeVar

from builders.drops import Drop
from builders.wikigen.records import Article
from builders.wikigen.select import reject_unparsed
from pipelines.errors import SourceFormatError
from pipelines.sources.wiki.article import build_article, guarded, log_slow, page_drop, page_url
from pipelines.sources.wiki.languages import rules_for
from pipelines.sources.wiki.wikitext import PageRules
from pipelines.sources.wiki.xml_source import UNREADABLE, XmlSource, local, parse_timestamp

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass
class SiteInfo:
    """What the export's ``<siteinfo>`` says about the wiki."""

    article_base: str = ""
    namespaces: dict[int, str] = field(default_factory=dict)
    language: str = ""
    """The export's ``xml:lang`` (the wiki's content language), empty when not given."""


@dataclass
class _Page:
    title: str = ""
    namespace: int = 0
    page_id: int = 0
    redirect_target: str = ""
    first_at: datetime | None = None
    last_at: datetime | None = None
    last_id: int = 0
    text: str = ""
    revisions: int = 0


def _child_text(elem: ET.Element, name: str) -> str:
    for child in elem:
        if local(child.tag) == name:
            return child.text or ""
    return ""


XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def site_from(elem: ET.Element, language: str = "") -> SiteInfo:
    """The :class:`SiteInfo` of a ``<siteinfo>`` element, in an export of ``language``."""
    info = SiteInfo(language=language)
    base = _child_text(elem, "base")
    if "/wiki/" in base:
        info.article_base = base.split("/wiki/", 1)[0] + "/wiki/"
    for child in elem:
        if local(child.tag) == "namespaces":
            for ns in child:
                info.namespaces[int(ns.get("key", "0"))] = ns.text or ""
    return info


def _revision(page: _Page, elem: ET.Element) -> None:
    stamp = parse_timestamp(_child_text(elem, "timestamp"))
    page.revisions += 1
    if page.first_at is None or stamp < page.first_at:
        page.first_at = stamp
    if page.last_at is None or stamp >= page.last_at:
        page.last_at = stamp
        page.last_id = int(_child_text(elem, "id") or 0)
        page.text = _child_text(elem, "text")


def _identify(page: _Page, elem: ET.Element) -> bool:
    """Set a finished ``<page>``'s title, namespace and id; False when title or id is missing."""
    page.title = _child_text(elem, "title")
    page.namespace = int(_child_text(elem, "ns") or 0)
    page.page_id = int(_child_text(elem, "id") or 0)
    return bool(page.title and page.page_id)


def _take(page: _Page, elem: ET.Element) -> None:
    """Fold a finished ``<revision>`` or ``<redirect>`` into its page (other elements are
    ignored); ValueError naming the page for a bad revision."""
    tag = local(elem.tag)
    if tag == "redirect":
        page.redirect_target = elem.get("title", "")
    elif tag == "revision":
        try:
            _revision(page, elem)
        except ValueError as exc:
            raise ValueError(f"page {page.title!r}: bad revision ({exc})") from exc


def page_from(elem: ET.Element, where: str) -> _Page:
    """A whole ``<page>`` element (from a multistream stream) as a page; ``where`` names the
    file and stream in errors."""
    page = _Page()
    if not _identify(page, elem):
        raise SourceFormatError(f"{where}: a <page> without <title> or <id>")
    for child in elem:
        try:
            _take(page, child)
        except ValueError as exc:
            raise SourceFormatError(f"{where}: {exc}") from exc
    return page


def iter_pages(path: Path) -> Iterator[tuple[SiteInfo, _Page]]:
    """Stream ``(siteinfo, page)`` pairs from the export, one page in memory at a time.

    Raises :class:`SourceFormatError` naming the file, the line, how many pages were read and
    the last of them, when the XML is malformed or the compressed stream is cut short.
    """
    read, last = 0, "none"
    try:
        for site, page in _pages(path):
            read, last = read + 1, f"{page.title!r} (id {page.page_id})"
            yield site, page
    except SourceFormatError as exc:
        done = f"{read} pages read before it, the last {last}" if read else "no page was read"
        raise SourceFormatError(f"{exc}; {done}") from exc


def _pages(path: Path) -> Iterator[tuple[SiteInfo, _Page]]:
    site = SiteInfo()
    page = _Page()
    root: ET.Element | None = None
    with XmlSource(path, events=("start", "end")) as xml:
        for event, elem in xml:
            tag = local(elem.tag)
            if event == "start":
                if root is None:
                    root = elem
                elif tag == "page":
                    page = _Page()
                continue
            if tag == "siteinfo":
                site = site_from(elem, root.get(XML_LANG, "") if root is not None else "")
            elif tag == "title":
                page.title = elem.text or ""
            elif tag in ("revision", "redirect"):
                try:
                    _take(page, elem)
                except ValueError as exc:
                    raise xml.fail(str(exc)) from exc
                if tag == "revision":
                    elem.clear()
            elif tag == "page":
                if not _identify(page, elem):
                    raise xml.fail("a <page> without <title> or <id> ends")
                yield site, page
                if root is not None:
                    root.clear()


def dump_language(path: Path) -> str:
    """The ``xml:lang`` of an export's root element (empty when it has none), reading only the
    start of the file."""
    with XmlSource(path, events=("start",)) as xml:
        for _, elem in xml:
            return elem.get(XML_LANG, "")
    return ""


def read_dump(
    path: Path,
    *,
    skip_sections: Iterable[str] | None = None,
    language: str = "en",
    variant: str = "",
    external_links: Iterable[str] | None = None,
    creation_dates: str = "history",
    read_at: datetime | None = None,
    workers: int = 1,
    batch_pages: int = 256,
    page_time_limit_s: float = 60.0,
    slow_page_s: float = 5.0,
    pages: Iterable[tuple[SiteInfo, _Page]] | None = None,
    cheap_rules_first: bool = False,
    tables_as_text: bool = False,
) -> Iterator[Article | Drop]:
    """Yield one Article per ``<page>`` of the export, in file order (or per page of ``pages``,
    e.g. the candidates of a multistream dump, :mod:`multistream`).

    Pages are dated by their earliest revision only with ``creation_dates='history'``; otherwise
    ``created_at`` is left empty for the wiki stage to look up (log or API) for candidates.
    With ``workers > 1`` the wikitext of each batch of ``batch_pages`` pages is parsed in a
    process pool; memory stays bounded by one batch.

    Pages are rendered by the rules of ``language`` (:func:`rules_for`; ``skip_sections`` and
    ``external_links`` replace its defaults when given; tables as text with ``tables_as_text``),
    with the namespace names of the dump's ``<siteinfo>``. A page that does not decode, fails
    to parse or takes longer than ``page_time_limit_s`` is yielded as a :class:`Drop` naming
    it; pages slower than ``slow_page_s`` are logged.

    With ``cheap_rules_first`` (the wiki stage's choice), a page outside the article namespace
    or marked as a redirect is yielded as the content :class:`Drop` the selection would give it,
    without parsing its wikitext.
    """
    read_at = read_at or datetime.now(UTC).replace(microsecond=0)
    convert = partial(
        _article,
        creation_dates=creation_dates,
        read_at=read_at,
        limit_s=page_time_limit_s,
        cheap_rules_first=cheap_rules_first,
    )

    source = pages

    def jobs() -> Iterator[tuple[PageRules, SiteInfo, _Page, datetime | None]]:
        count = with_history = 0
        site_seen: dict[int, str] | None = None
        made = PageRules()
        for site, page in iter_pages(path) if source is None else source:
            count += 1
            with_history += page.revisions > 1
            if site.namespaces is not site_seen:
                site_seen = site.namespaces
                made = rules_for(
                    language,
                    skip_sections=skip_sections,
                    external_links=external_links,
                    variant=variant,
                    namespaces=site.namespaces,
                    tables_as_text=tables_as_text,
                )
            yield made, site, page, page.first_at if creation_dates == "history" else None
        if creation_dates == "history" and count and not with_history:
            log.warning(
                "%s: every page has a single revision, so 'history' dates pages by their last "
                "edit; for a pages-articles dump set wiki.dump.creation_dates to 'log' or 'api'",
                path,
            )

    if workers <= 1:
        yield from log_slow((convert(job) for job in jobs()), slow_page_s, str(path))
        return
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for batch in _batched(jobs(), batch_pages):
            size = max(1, len(batch) // (4 * workers))
            yield from log_slow(pool.map(convert, batch, chunksize=size), slow_page_s, str(path))


def _batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _article(
    job: tuple[PageRules, SiteInfo, _Page, datetime | None],
    *,
    creation_dates: str,
    read_at: datetime,
    limit_s: float,
    cheap_rules_first: bool = False,
) -> tuple[Article | Drop, float]:
    rules, site, page, created_at = job
    url = page_url(site.article_base, page.title) if site.article_base else ""
    about = {"page_id": page.page_id, "title": page.title, "namespace": page.namespace}
    unreadable = (page.title + page.text).count(UNREADABLE)
    if unreadable:
        detail = (
            f"page {page.title!r} (id {page.page_id}): {unreadable} bytes that do not decode "
            "or characters XML forbids"
        )
        return page_drop("undecodable", detail, url=url, reader="dump", **about), 0.0
    if cheap_rules_first:
        unparsed = reject_unparsed(
            page.title,
            page_id=page.page_id,
            url=url,
            namespace=page.namespace,
            redirect_target=page.redirect_target,
            created_at=created_at,
            reader="dump",
        )
        if unparsed is not None:  # its wikitext is never parsed
            return unparsed, 0.0
    build = partial(
        build_article,
        **about,
        wikitext=page.text,
        url=url,
        created_at=created_at,
        created_at_source=creation_dates,
        last_revision_id=page.last_id,
        last_revision_at=page.last_at,
        reader="dump",
        read_at=read_at,
        rules=rules,
        is_redirect=bool(page.redirect_target),
        redirect_target=page.redirect_target,
    )
    return guarded(build, limit_s=limit_s, url=url, reader="dump", **about)
