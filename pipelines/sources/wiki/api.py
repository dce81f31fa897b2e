"""Read candidate pages from a live MediaWiki API into the same Article records as the dump reader.

Candidates come from the configured categories and from pages created inside the creation window:
the creation log (``list=logevents``, ``letype=create``), or recent changes (``rctype=new``, which
Wikipedia keeps for 30 days). The creation log names a page by the title it was created under, so
a page moved since appears under its old title, now a redirect, whose target is read too. Content is
fetched in batches; each page's creation time is its first revision's timestamp.

Sections, infobox, references and external links come from the fetched wikitext through the same
parser as the dump reader, so both readers produce the same records; categories are the ones
MediaWiki reports. The integration test checks sections against MediaWiki's own section list and
links against its rendered external links.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from typing import Any

from builders.drops import Drop
from builders.wikigen.records import Article
from builders.wikigen.select import window_bounds
from pipelines.errors import ParamsError
from pipelines.sources.wiki.article import build_article, guarded, page_url
from pipelines.sources.wiki.mediawiki_client import MediaWikiClient
from pipelines.sources.wiki.settings import WikiSettings
from pipelines.sources.wiki.wikitext import PageRules
from pipelines.sources.wiki.xml_source import parse_timestamp

log = logging.getLogger(__name__)


# list= module -> (parameter prefix, parameters) listing main-namespace pages created in a window
NEW_PAGE_QUERIES: dict[str, tuple[str, dict[str, Any]]] = {
    "logevents": ("le", {"letype": "create", "lenamespace": 0, "leprop": "title"}),
    "recentchanges": ("rc", {"rctype": "new", "rcnamespace": 0, "rcprop": "title"}),
}


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def discover_titles(client: MediaWikiClient, settings: WikiSettings, category_ns: str) -> list[str]:
    """List candidate titles: members of ``api.categories`` plus pages created in the window."""
    titles: dict[str, None] = {}
    for category in settings.api.categories:
        params = {
            "list": "categorymembers",
            "cmtitle": f"{category_ns}:{category}",
            "cmnamespace": 0,
            "cmlimit": "max",
        }
        for block in client.query(params):
            titles.update((m["title"], None) for m in block.get("categorymembers", []))
    if settings.api.new_pages != "off":
        kind = settings.api.new_pages
        prefix, params = NEW_PAGE_QUERIES[kind]
        start, end = window_bounds(settings)
        window = {"dir": "newer", "start": _iso(start), "end": _iso(end), "limit": "max"}
        params = {"list": kind, **params, **{prefix + k: v for k, v in window.items()}}
        for block in client.query(params):
            titles.update((item["title"], None) for item in block.get(kind, []))
    found = list(titles)
    if len(found) > settings.api.max_pages:
        log.warning(
            "%d candidates; keeping the first api.max_pages=%d", len(found), settings.api.max_pages
        )
    return found[: settings.api.max_pages]


def _merge(into: dict[str, Any], page: dict[str, Any]) -> None:
    for key, value in page.items():
        if isinstance(value, list) and isinstance(into.get(key), list):
            into[key].extend(value)
        else:
            into[key] = value


def fetch_pages(client: MediaWikiClient, titles: list[str]) -> list[dict[str, Any]]:
    """Fetch latest wikitext, info and visible categories of ``titles`` in one continued query."""
    params = {
        "prop": "info|revisions|categories",
        "titles": "|".join(titles),
        "rvprop": "ids|timestamp|content",
        "rvslots": "main",
        "clshow": "!hidden",
        "cllimit": "max",
    }
    pages: dict[str, dict[str, Any]] = {}
    for block in client.query(params):
        for page in block.get("pages", []):
            _merge(pages.setdefault(page["title"], {}), page)
    return [pages[t] for t in titles if t in pages]


def _to_article(
    client: MediaWikiClient,
    page: dict[str, Any],
    base: str,
    rules: PageRules,
    read_at: datetime,
    rendered: bool = False,
) -> Article:
    revision = (page.get("revisions") or [{}])[0]
    wikitext = revision.get("slots", {}).get("main", {}).get("content", "")
    reported = [c["title"].split(":", 1)[1] for c in page.get("categories", [])]
    html = client.page_html(page["title"]) if rendered and not page.get("redirect") else ""
    article = build_article(
        page_id=page["pageid"],
        title=page["title"],
        namespace=page.get("ns", 0),
        wikitext=wikitext,
        html=html,
        url=page_url(base, page["title"]),
        created_at=client.first_revision_time(page["title"]),
        created_at_source="api",
        last_revision_id=revision.get("revid", 0),
        last_revision_at=parse_timestamp(revision["timestamp"]) if revision else None,
        reader="html" if html else "api",
        read_at=read_at,
        rules=rules,
        is_redirect=bool(page.get("redirect")),
    )
    in_text = [c for c in article.categories if c in reported]
    categories = in_text + [c for c in reported if c not in in_text]
    return article if categories == article.categories else _with_categories(article, categories)


def _with_categories(article: Article, categories: list[str]) -> Article:
    from dataclasses import replace

    return replace(article, categories=categories)


def read_api(
    client: MediaWikiClient, settings: WikiSettings, read_at: datetime | None = None
) -> Iterator[Article | Drop]:
    """Yield an Article for every candidate page of the live wiki (a Drop naming the page when
    its wikitext cannot be rendered within the page time limit). A wiki whose siteinfo gives
    another language than ``wiki.language`` is refused (:class:`ParamsError` naming the keys
    to set) before any page is read."""
    read_at = read_at or datetime.now(UTC).replace(microsecond=0)
    rendered = settings.reader == "html"
    base, namespaces, language = client.siteinfo()
    problem = settings.language_mismatch(language, settings.api.url)
    if problem:
        raise ParamsError(problem)
    rules = settings.rules(namespaces)
    titles = discover_titles(client, settings, namespaces.get(14) or "Category")
    log.info("%s: %d candidate pages", settings.api.url, len(titles))
    queued = set(titles)
    size = settings.api.batch_size
    done = 0
    while done < len(titles):
        batch = titles[done : done + size]
        done += len(batch)
        for page in fetch_pages(client, batch):
            if page.get("missing") or "pageid" not in page:
                log.warning(
                    "%s: page %r vanished before it was read", settings.api.url, page.get("title")
                )
                continue
            article, seconds = guarded(
                partial(_to_article, client, page, base, rules, read_at, rendered),
                limit_s=settings.page_time_limit_s,
                page_id=page["pageid"],
                title=page["title"],
                namespace=page.get("ns", 0),
                url=page_url(base, page["title"]),
                reader=settings.reader,
            )
            if seconds > settings.slow_page_s:
                log.warning("%s: page %r took %.1f s", settings.api.url, page["title"], seconds)
            if isinstance(article, Drop):
                yield article
                continue
            target = article.redirect_target
            # a page moved after creation is logged under its old title, now a redirect
            if target and target not in queued and len(titles) < settings.api.max_pages:
                queued.add(target)
                titles.append(target)
            yield article
