"""What an LV-Eval build starts from: the selected events (the wikigen entries), the items and
passages of any configured Hugging Face QA dataset, and the distractor pools of those passages."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from builders.lveval.passages import corpus as entry_corpus
from builders.lveval.pools import Pools
from builders.lveval.records import Passage
from builders.lveval.settings import LVEvalSettings
from builders.releases import Release, day_of
from pipelines.errors import MissingInputError
from pipelines.sources.hub.qa_sets import hub_items
from pipelines.synthesis.lveval import Built


def read_inputs(
    settings: LVEvalSettings, entries: Path, releases: Sequence[Release]
) -> tuple[list[dict[str, Any]], Pools, Built]:
    """The events (when ``events.enabled``), the pools of every passage by release, and the hub
    datasets' items and drops so far."""
    built = Built()
    passages: list[Passage] = []
    events = []
    if settings.events.enabled:
        if not entries.is_file():
            raise MissingInputError(f"missing {entries} (the wikigen entries)", entries)
        events = sorted(pq.read_table(entries).to_pylist(), key=lambda e: e["event_id"])
        passages += entry_corpus(events, settings.passage_words)
    for n, source in enumerate(settings.hub_sources):
        items, own, drops = hub_items(source, f"[lveval -> hub_sources -> {n}]")
        built.items += items
        passages += own
        built.drops += drops
    days = {e["event_id"]: day_of(e["created_at"]) for e in events if e.get("created_at")}
    return events, Pools(passages, days, releases), built


def pool_use(pools: Pools, built: Built) -> dict[str, dict[str, int]]:
    """Which pool every prepared item drew from (its first release's last creation day): items
    and passages per pool."""
    return {
        str(pool.until): {"items": n, "passages": len(pool.passages)}
        for pool, n in Counter(pools.of(p.item) for p in built.prepared).items()
    }
