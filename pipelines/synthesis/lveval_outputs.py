"""The files of an LV-Eval build: the verified QA items, the drops and the proposed rules, then
every item at every level as records and L-Eval lines, and LV-Eval's own layout read back from
the records. Each file's rows are counted on the stage's stats."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from builders.drops import DROP_SCHEMA, DROPS
from builders.leval.export import leval_line
from builders.lveval.build import Prepared, records
from builders.lveval.official import write_official
from builders.lveval.pools import Pools
from builders.lveval.records import QA_SCHEMA, RECORD_SCHEMA
from builders.lveval.settings import LVEvalSettings
from pipelines.errors import ParamsError
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.stats import StageStats
from pipelines.synthesis.lveval import Built
from pipelines.synthesis.lveval_rules import write_rules

QA = "qa.parquet"
RULES = "rules.jsonl"
RECORDS = "records"
LEVAL = "leval"
OFFICIAL = "official"


def write_items(folder: Path, built: Built, stats: StageStats) -> None:
    """``qa.parquet``, ``drops.parquet`` (each drop counted by step and reason) and
    ``rules.jsonl``; the items are counted, all and by hops."""
    with TableWriter(folder / QA, QA_SCHEMA) as qa_out:
        for prepared in built.prepared:
            qa_out.write(prepared.item.to_row())
    with TableWriter(folder / DROPS, DROP_SCHEMA) as drops_out:
        for drop in built.drops:
            drops_out.write(drop.to_row())
            stats.drop(f"{drop.step}_{drop.reason}")
    write_rules(folder / RULES, built.proposed)
    stats.update("qa_items", len(built.prepared))
    stats.counts.update(Counter(f"qa_items_{p.item.hops}_hop" for p in built.prepared))


def write_levels(
    folder: Path,
    built: Built,
    pools: Pools,
    settings: LVEvalSettings,
    sizes: dict[str, int],
    stats: StageStats,
) -> dict[str, dict[str, int]]:
    """``records/<dataset>_<level>.parquet`` and ``leval/<dataset>_<level>.jsonl`` for every
    level (``sizes``: its words) and dataset; the words and record lengths of each level."""
    datasets = sorted({p.item.dataset for p in built.prepared})
    (folder / RECORDS).mkdir()
    (folder / LEVAL).mkdir()
    lengths: dict[str, list[int]] = {}
    for label, size in sizes.items():
        for dataset in datasets:
            mine = [p for p in built.prepared if p.item.dataset == dataset]
            written = _write_level(folder, dataset, label, size, mine, pools, settings)
            if written:
                stats.update(f"records_{label}", len(written))
                lengths.setdefault(label, []).extend(written)
    return {
        label: {"words": sizes[label], "min_length": min(v), "max_length": max(v)}
        for label, v in lengths.items()
    }


def _write_level(
    folder: Path,
    dataset: str,
    label: str,
    size: int,
    items: list[Prepared],
    pools: Pools,
    settings: LVEvalSettings,
) -> list[int]:
    """The records of ``dataset``'s ``items`` at level ``label`` (``size`` words), in both
    layouts, each item's distractors from its own pool; the length of each record."""
    name = f"{dataset}_{label}"
    lengths = []
    with (
        TableWriter(
            folder / RECORDS / f"{name}.parquet", RECORD_SCHEMA, settings.rows_per_write(size)
        ) as records_out,
        (folder / LEVAL / f"{name}.jsonl").open("w", encoding="utf-8") as leval,
    ):
        for prepared in progress_iter(items, f"lveval: {name}"):
            pool = pools.of(prepared.item)
            for row in records(
                prepared,
                pool.corpus,
                label,
                size,
                seed=settings.seed,
                tolerance=settings.tolerance,
                copies=settings.cfi.copies,
                pool_until="" if pool.until is None else pool.until.isoformat(),
            ):
                records_out.write(row)
                leval.write(json.dumps(leval_line(row), ensure_ascii=False) + "\n")
                lengths.append(row["length"])
    return lengths


def write_official_layout(folder: Path, settings: LVEvalSettings) -> None:
    """``official/<variant>/<name>_<level>.jsonl``, read back from the records in batches."""
    try:
        write_official(folder / RECORDS, folder / OFFICIAL, settings.official_name)
    except ValueError as exc:
        raise ParamsError(f"[lveval -> official_name] {exc}") from None
