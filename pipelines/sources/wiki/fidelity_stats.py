"""The wiki stage's tally of rendering fidelity: totals over the pages read, and the suspect
pages by name.

Besides headings and markup left, the counters show what rendering met that no reader renders
perfectly (:class:`~builders.wikigen.records.RenderTally`), so that a regression shows in
``stats.json``: ``conversions`` (``{{convert}}`` templates) and ``unit_codes_raw`` (their unit
codes printed as written for want of a name, named with their counts in
``unit_codes_raw_names``), ``math_rendered`` (formulas shown as TeX), ``table_words`` (words
left out with the tables) and ``mostly_tables_pages`` (pages with most of their words in tables,
also counted among the suspect pages).
"""

from __future__ import annotations

from collections import Counter

from builders.wikigen.records import Article
from pipelines.sources.wiki.fidelity import TABLE_SHARE, table_share
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
    _count_tally(stats, article, extra)
    if f.suspect:
        stats.update("suspect_pages")
        shown = extra.setdefault("suspect_pages", [])
        assert isinstance(shown, list)
        if len(shown) < SUSPECT_SHOWN:
            shown.append({"title": article.title, "page_id": article.page_id, "why": f.suspect})


def _count_tally(stats: StageStats, article: Article, extra: dict[str, object]) -> None:
    tally = article.fidelity.tally
    stats.update("conversions", tally.conversions)
    stats.update("unit_codes_raw", len(tally.raw_units))
    stats.update("math_rendered", tally.math)
    stats.update("table_words", tally.table_words)
    stats.update("mostly_tables_pages", table_share(tally, article.word_count) > TABLE_SHARE)
    if tally.raw_units:
        names = extra.setdefault("unit_codes_raw_names", Counter())
        assert isinstance(names, Counter)
        names.update(tally.raw_units)
