"""The files of an LV-Eval build: the verified QA items, the drops and the proposed rules, then
every item at every level as records and L-Eval lines, and LV-Eval's own layout read back from
the records. Each file's rows are counted on the stage's stats."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.drops import DROP_SCHEMA, DROPS
from builders.leval.export import leval_line
from builders.lveval.build import Prepared, records
from builders.lveval.contexts import AssemblyError
from builders.lveval.official import write_official
from builders.lveval.pools import Pools
from builders.lveval.records import QA_SCHEMA, RECORD_SCHEMA, TOKEN_RECORD_SCHEMA, drop
from builders.lveval.settings import LVEvalSettings
from builders.lveval.token_sizing import TokenCounts
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
    """``qa.parquet`` and ``rules.jsonl``; the items are counted, all and by hops."""
    with TableWriter(folder / QA, QA_SCHEMA) as qa_out:
        for prepared in built.prepared:
            qa_out.write(prepared.item.to_row())
    write_rules(folder / RULES, built.proposed)
    stats.update("qa_items", len(built.prepared))
    stats.counts.update(Counter(f"qa_items_{p.item.hops}_hop" for p in built.prepared))


def write_drops(folder: Path, built: Built, stats: StageStats) -> None:
    """``drops.parquet``, each drop counted by step and reason (written last: a level an item
    cannot fill is a drop too)."""
    with TableWriter(folder / DROPS, DROP_SCHEMA) as drops_out:
        for drop in built.drops:
            drops_out.write(drop.to_row())
            stats.drop(f"{drop.step}_{drop.reason}")


def write_levels(
    folder: Path,
    built: Built,
    pools: Pools,
    settings: LVEvalSettings,
    sizes: dict[str, int],
    stats: StageStats,
    tokens: TokenCounts | None = None,
) -> dict[str, dict[str, Any]]:
    """``records/<dataset>_<level>.parquet`` and ``leval/<dataset>_<level>.jsonl`` for every
    level (``sizes``: its words, or its tokens of ``tokens``' tokenizer) and dataset; the size
    and the record lengths (and request tokens) of each level. An item that cannot fill a level
    is dropped from it (step ``assembly``, reason ``level_unfilled``)."""
    datasets = sorted({p.item.dataset for p in built.prepared})
    (folder / RECORDS).mkdir()
    (folder / LEVAL).mkdir()
    written: dict[str, list[dict[str, Any]]] = {}
    for label, size in sizes.items():
        for dataset in datasets:
            mine = [p for p in built.prepared if p.item.dataset == dataset]
            level = Level(dataset, label, size, settings, tokens)
            rows = level.write(folder, mine, pools, built)
            if rows:
                stats.update(f"records_{label}", len(rows))
                written.setdefault(label, []).extend(rows)
    return {label: _level_stats(sizes[label], rows, tokens) for label, rows in written.items()}


def _level_stats(
    size: int, rows: list[dict[str, Any]], tokens: TokenCounts | None
) -> dict[str, Any]:
    """A level's size and the least and most of its records' lengths (and request tokens)."""
    lengths = [r["length"] for r in rows]
    if tokens is None:
        return {"words": size, "min_length": min(lengths), "max_length": max(lengths)}
    requests = [r["request_tokens"] for r in rows]
    return {
        "tokens": size,
        "tokenizer": tokens.tokenizer.name,
        "framing": tokens.tokenizer.framing,
        "min_request_tokens": min(requests),
        "max_request_tokens": max(requests),
        "min_length": min(lengths),
        "max_length": max(lengths),
    }


@dataclass(frozen=True)
class Level:
    """One dataset at one level: its file names, size and unit."""

    dataset: str
    label: str
    size: int
    settings: LVEvalSettings
    tokens: TokenCounts | None

    def write(
        self, folder: Path, items: list[Prepared], pools: Pools, built: Built
    ) -> list[dict[str, Any]]:
        """The records of ``items`` in both layouts, each item's distractors from its own pool;
        each record's length and request tokens. An item that cannot fill the level is added
        to ``built``'s drops."""
        s, name = self.settings, f"{self.dataset}_{self.label}"
        schema = RECORD_SCHEMA if self.tokens is None else TOKEN_RECORD_SCHEMA
        out = []
        with (
            TableWriter(
                folder / RECORDS / f"{name}.parquet", schema, s.rows_per_write(self.size)
            ) as records_out,
            (folder / LEVAL / f"{name}.jsonl").open("w", encoding="utf-8") as leval,
        ):
            for prepared in progress_iter(items, f"lveval: {name}"):
                try:
                    rows = list(self._records(prepared, pools))
                except AssemblyError as exc:
                    item = prepared.item
                    detail = f"{self.label}: {exc}"
                    built.drops.append(
                        drop(item.dataset, item.qa_id, "assembly", "level_unfilled", detail)
                    )
                    continue
                for row in rows:
                    records_out.write(row)
                    leval.write(json.dumps(leval_line(row), ensure_ascii=False) + "\n")
                    out.append({k: row.get(k) for k in ("length", "request_tokens")})
        return out

    def _records(self, prepared: Prepared, pools: Pools) -> Iterator[dict[str, Any]]:
        pool = pools.of(prepared.item)
        return records(
            prepared,
            pool.corpus,
            self.label,
            self.size,
            seed=self.settings.seed,
            tolerance=self.settings.tolerance,
            copies=self.settings.cfi.copies,
            pool_until="" if pool.until is None else pool.until.isoformat(),
            tokens=self.tokens,
        )


def write_official_layout(folder: Path, settings: LVEvalSettings) -> None:
    """``official/<variant>/<name>_<level>.jsonl``, read back from the records in batches."""
    try:
        write_official(folder / RECORDS, folder / OFFICIAL, settings.official_name)
    except ValueError as exc:
        raise ParamsError(f"[lveval -> official_name] {exc}") from None
