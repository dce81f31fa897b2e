"""Turn one page's metadata plus wikitext into an Article record; shared by both readers."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from urllib.parse import quote

from builders.wikigen.records import Article
from pipelines.sources.wikitext import parse_wikitext


def page_url(base: str, title: str) -> str:
    """Return the page URL for ``title`` under an article path such as ``https://x/wiki/``."""
    return base + quote(title.replace(" ", "_"), safe="/:(),'!*-._~")


def build_article(
    *,
    page_id: int,
    title: str,
    namespace: int,
    wikitext: str,
    url: str,
    created_at: datetime | None,
    created_at_source: str,
    last_revision_id: int,
    last_revision_at: datetime | None,
    reader: str,
    read_at: datetime,
    skip_sections: Iterable[str],
    category_namespace: str = "Category",
    is_redirect: bool = False,
    redirect_target: str = "",
    categories: list[str] | None = None,
) -> Article:
    """Parse ``wikitext`` and assemble the record.

    ``categories`` overrides the explicit category links of the wikitext (the api reader passes
    the categories MediaWiki reports).
    """
    parsed = parse_wikitext(
        wikitext, skip_sections=skip_sections, category_namespace=category_namespace
    )
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
    )
