"""The ``wiki`` stage: read pages, select fresh events, write articles, rejections and stats."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from builders.drops import DROP_SCHEMA, DROPS, Drop
from builders.wikigen.records import ARTICLE_SCHEMA
from builders.wikigen.select import check_content, check_window
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.sources.wiki.fidelity_stats import count_fidelity
from pipelines.sources.wiki.reading import read_pages
from pipelines.sources.wiki.settings import WikiSettings
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

ARTICLES = "articles.parquet"


def run_wiki(settings: WikiSettings, *, out: Path) -> StageStats:
    """Select fresh events into ``articles.parquet``; the rest into ``drops.parquet``.

    Pages are streamed: memory holds one page plus a batch of output rows. Creation dates that the
    reader could not supply are looked up only for pages that passed every other rule.
    """
    with stage_run("wiki", out) as run:
        pages, lookup = read_pages(settings, run.extra)
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
                count_fidelity(stats, article, run.extra)
                rejection = check_content(article, settings)
                if rejection is None and article.created_at is None and lookup is not None:
                    article = replace(article, created_at=lookup(article.title))
                    stats.update("created_at_looked_up")
                rejection = rejection or check_window(article, settings)
                if rejection is None:
                    kept.write(article.to_row())
                    stats.update("selected")
                    stats.update("words_kept", article.word_count)
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
    suspect = f", {c['suspect_pages']} suspect renderings" if c.get("suspect_pages") else ""
    return (
        f"wiki: {c['read']} pages read, {c['selected']} events selected, "
        f"{c['rejected']} rejected ({reasons}){suspect} in {stats.duration_s:.1f} s -> {out}/"
    )
