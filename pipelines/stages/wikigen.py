"""The ``wikigen`` stage: WikiGenBench entries from the selected events and their documents."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from builders.wikigen.entries import build_entry, event_id
from builders.wikigen.records import ENTRY_SCHEMA, WebDocument
from builders.wikigen.settings import WikigenSettings
from pipelines.errors import MissingInputError
from pipelines.outputs import TableWriter
from pipelines.sources.wiki.articles import read_articles
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

ENTRIES = "entries.parquet"


def run_wikigen(
    settings: WikigenSettings, *, articles: Path, documents: Path, out: Path
) -> StageStats:
    """Write one entry per event, with its split, to ``entries.parquet``, plus stats."""
    with stage_run("wikigen", out) as run:
        if not documents.is_file():
            raise MissingInputError(f"missing {documents} (the related documents)", documents)
        events = read_articles(articles)
        by_event: dict[str, list[WebDocument]] = defaultdict(list)
        for row in pq.read_table(documents).to_pylist():
            by_event[row["event_id"]].append(WebDocument(**row))
        stats = run.stats
        with TableWriter(run.scratch / ENTRIES, ENTRY_SCHEMA) as writer:
            for article in events:
                entry = build_entry(
                    article,
                    by_event.get(event_id(article), []),
                    settings.seed,
                    settings.test_fraction,
                )
                writer.write(entry.to_row())
                stats.update("entries")
                stats.update(f"split_{entry.split}")
                stats.update("documents", len(entry.documents))
                for doc in entry.documents:
                    stats.update(f"documents_{doc.origin}")
                if not entry.documents:
                    stats.update("entries_without_documents")
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    c = stats.counts
    bare = c.get("entries_without_documents", 0)
    note = f" ({bare} entries without any)" if bare else ""
    return (
        f"wikigen: {c['entries']} entries ({c['split_train']} train, {c['split_test']} test), "
        f"{c['documents']} documents{note} -> {out}/"
    )
