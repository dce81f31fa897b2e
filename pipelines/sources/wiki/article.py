"""Turn one page's metadata plus wikitext into an Article record; shared by both readers.

A page that cannot be turned into a record (its bytes do not decode, the parser fails, or it
takes longer than the page time limit) becomes a :class:`~builders.drops.Drop` naming the page
and what failed, and reading goes on.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from urllib.parse import quote

from builders.drops import Drop
from builders.wikigen.records import Article
from pipelines.errors import WikiApiError
from pipelines.sources.wiki.fidelity import fidelity, judged, leftover_markup
from pipelines.sources.wiki.html import parse_html
from pipelines.sources.wiki.wikitext import PageRules, parse_wikitext

log = logging.getLogger(__name__)


def page_url(base: str, title: str) -> str:
    """Return the page URL for ``title`` under an article path such as ``https://x/wiki/``."""
    return base + quote(title.replace(" ", "_"), safe="/:(),'!*-._~")


def build_article(
    *,
    page_id: int,
    title: str,
    namespace: int,
    wikitext: str = "",
    html: str = "",
    url: str,
    created_at: datetime | None,
    created_at_source: str,
    last_revision_id: int,
    last_revision_at: datetime | None,
    reader: str,
    read_at: datetime,
    rules: PageRules,
    is_redirect: bool = False,
    redirect_target: str = "",
    categories: list[str] | None = None,
) -> Article:
    """Parse the page's ``wikitext``, or its rendered ``html`` when given, and assemble the
    record.

    ``categories`` overrides the explicit category links of the page (the api reader passes
    the categories MediaWiki reports). Templates that count time (``{{age}}``) count to the
    page's last revision (else ``read_at``): the same revision always reads the same, as its
    editor saw it, whatever the day of the run.
    """
    as_of = (last_revision_at or read_at).date()
    parsed = parse_html(html, rules) if html else parse_wikitext(wikitext, rules, as_of)
    texts = [parsed.summary, *(s.text for s in parsed.sections)]
    if html:  # MediaWiki rendered the headings itself: the source's are the ones found
        judgement = judged(parsed.headings, parsed.headings, leftover_markup(texts))
    else:
        judgement = fidelity(wikitext, parsed.headings, texts, parsed.tally, parsed.word_count)
    target = redirect_target or parsed.redirect_target
    return Article(
        page_id=page_id,
        title=title,
        url=url,
        namespace=namespace,
        is_redirect=is_redirect or bool(parsed.redirect_target),
        redirect_target=target,
        created_at=created_at,
        created_at_source=created_at_source,
        last_revision_id=last_revision_id,
        last_revision_at=last_revision_at,
        categories=parsed.categories if categories is None else categories,
        templates=parsed.templates,
        infobox_type=parsed.infobox_type,
        infobox=parsed.infobox,
        summary=parsed.summary,
        sections=parsed.sections,
        outline=parsed.outline,
        word_count=parsed.word_count,
        references=parsed.references,
        external_links=parsed.external_links,
        reader=reader,
        read_at=read_at,
        length_unit=rules.length_unit,
        fidelity=judgement,
    )


class PageTimeout(Exception):
    """A page took longer than the page time limit."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`PageTimeout` in the block after ``seconds`` (a real-time timer, so only in
    a process's main thread; elsewhere the block runs unlimited and is only timed)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise PageTimeout

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def page_drop(
    reason: str, detail: str, *, page_id: int, title: str, namespace: int, url: str, reader: str
) -> Drop:
    """The record of a page the reader could not read."""
    return Drop.of(
        "wiki", "", "page", title, "read", reason, detail,
        page_id=page_id, url=url, namespace=namespace, reader=reader,
    )  # fmt: skip


def guarded(
    build: Callable[[], Article],
    *,
    limit_s: float,
    page_id: int,
    title: str,
    namespace: int,
    url: str,
    reader: str,
) -> tuple[Article | Drop, float]:
    """Run ``build`` for one page within ``limit_s`` seconds: the article, or a drop naming the
    page and what failed; and the seconds it took."""
    start = time.perf_counter()
    where = f"page {title!r} (id {page_id})"
    page = {"page_id": page_id, "title": title, "namespace": namespace, "url": url}
    try:
        with time_limit(limit_s):
            result: Article | Drop = build()
    except PageTimeout:
        detail = f"{where}: rendering took over the page time limit of {limit_s:g} s"
        result = page_drop("too_slow", detail, reader=reader, **page)
    except WikiApiError as exc:
        result = page_drop("unavailable", f"{where}: {exc}", reader=reader, **page)
    except RecursionError:
        detail = f"{where}: markup nested too deeply to render"
        result = page_drop("unparsable", detail, reader=reader, **page)
    except Exception as exc:  # one bad page must not stop the stage; the drop keeps the reason
        detail = f"{where}: {type(exc).__name__}: {exc}"
        result = page_drop("unparsable", detail, reader=reader, **page)
    return result, time.perf_counter() - start


def log_slow(
    results: Iterable[tuple[Article | Drop, float]], slow_s: float, where: str
) -> Iterator[Article | Drop]:
    """Pass the records on, naming in the log every page that took longer than ``slow_s``."""
    for result, seconds in results:
        if seconds > slow_s:
            title = result.title if isinstance(result, Article) else result.item_id
            log.warning("%s: page %r took %.1f s to render", where, title, seconds)
        yield result
