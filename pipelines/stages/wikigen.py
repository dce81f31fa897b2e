"""The ``wikigen`` stage: WikiGenBench entries from the selected events and their documents."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from builders.wikigen.entries import build_entry, event_id
from builders.wikigen.records import ENTRY_SCHEMA, WebDocument
from pipelines.errors import MissingInputError
from pipelines.outputs import TableWriter, staged_outputs, write_json
from pipelines.settings import WikigenSettings
from pipelines.stages.web import read_articles
from pipelines.stats import StageStats

ENTRIES = "entries.parquet"


def run_wikigen(
    settings: WikigenSettings, articles_path: Path, documents_path: Path, out_dir: Path
) -> StageStats:
    """Write one entry per event, with its split, to ``entries.parquet``, plus stats."""
    if not documents_path.is_file():
        raise MissingInputError(f"missing {documents_path}; run 'dvc repro web' first")
    articles = read_articles(articles_path)
    by_event: dict[str, list[WebDocument]] = defaultdict(list)
    for row in pq.read_table(documents_path).to_pylist():
        by_event[row["event_id"]].append(WebDocument(**row))
    stats = StageStats("wikigen")
    with staged_outputs(out_dir) as scratch:
        with TableWriter(scratch / ENTRIES, ENTRY_SCHEMA) as writer:
            for article in articles:
                entry = build_entry(
                    article,
                    by_event.get(event_id(article), []),
                    settings.seed,
                    settings.test_fraction,
                )
                writer.write(entry)
                stats.update("entries")
                stats.update(f"split_{entry['split']}")
                stats.update("documents", len(entry["documents"]))
                for doc in entry["documents"]:
                    stats.update(f"documents_{doc['origin']}")
                if not entry["documents"]:
                    stats.update("entries_without_documents")
        stats.finish()
        write_json(scratch / "stats.json", stats.to_dict())
    return stats
