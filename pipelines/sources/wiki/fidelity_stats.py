"""The wiki stage's tally of rendering fidelity: totals over the pages read, and the suspect
pages by name."""

from __future__ import annotations

from builders.wikigen.records import Article
from pipelines.stats import StageStats

SUSPECT_SHOWN = 50
"""Suspect pages listed by name in ``stats.json`` (all are counted)."""


def count_fidelity(stats: StageStats, article: Article, extra: dict[str, object]) -> None:
    """Add the page's fidelity figures to the stage's, and name it when it looks suspect."""
    if article.is_redirect:
        return
    f = article.fidelity
    stats.update("pages_rendered")
    stats.update("source_headings", f.source_headings)
    stats.update("headings_found", f.headings)
    stats.update("leftover_markup", f.leftover_markup)
    if f.suspect:
        stats.update("suspect_pages")
        shown = extra.setdefault("suspect_pages", [])
        assert isinstance(shown, list)
        if len(shown) < SUSPECT_SHOWN:
            shown.append({"title": article.title, "page_id": article.page_id, "why": f.suspect})
