"""Numbers for the dataset card: rows by split, length distributions, crawl outcomes and
everything a stage left out (rejected pages, dropped items), so nothing is silently lost."""

from __future__ import annotations

import statistics as st
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipelines.errors import PublishError
from pipelines.publish.export import ExportedConfig

DOCUMENTS = "web/documents.parquet"
WIKI_REJECTED = "wiki/drops.parquet"
SUMMHAY_DROPS = "summhay/drops.parquet"
LVEVAL_DROPS = "lveval/drops.parquet"


@dataclass(frozen=True)
class StatTable:
    """A titled table for the card."""

    title: str
    note: str
    columns: list[str]
    rows: list[list[Any]]


def split_counts(configs: list[ExportedConfig]) -> StatTable:
    """Rows (and bytes on disk) of every config and split."""
    rows = [
        [c.name, split, files.rows, _mb(files.bytes), len(files.files)]
        for c in configs
        for split, files in c.splits.items()
    ]
    return StatTable(
        "Rows by config and split", "", ["config", "split", "rows", "MB", "shards"], rows
    )


def length_distributions(configs: list[ExportedConfig]) -> StatTable:
    """Word-length distribution of each config's text column."""
    rows = []
    for c in configs:
        if not c.word_lengths:
            continue
        n = sorted(c.word_lengths)
        q = st.quantiles(n, n=10, method="inclusive") if len(n) > 1 else [n[0]] * 9
        rows.append(
            [
                c.name,
                c.spec.text_column,
                len(n),
                n[0],
                round(q[0]),
                round(st.median(n)),
                round(st.fmean(n)),
                round(q[-1]),
                n[-1],
            ]
        )
    return StatTable(
        "Length in words",
        "Words per text (whitespace-separated; a count column such as `word_count` as it is "
        "published), over every split.",
        ["config", "of", "texts", "min", "p10", "median", "mean", "p90", "max"],
        rows,
    )


def token_lengths(configs: list[ExportedConfig], names: Sequence[str]) -> StatTable:
    """Tokens per row of every config with a ``tokens`` column: min / median / max in each
    tokenizer (LV-Eval's configs give each level in each tokenizer)."""
    rows = []
    for c in configs:
        counts = [sorted(c.token_lengths.get(name, [])) for name in names]
        if not any(counts):
            continue
        spans = [f"{n[0]:,} / {round(st.median(n)):,} / {n[-1]:,}" if n else "" for n in counts]
        rows.append([c.name, max(len(n) for n in counts), *spans])
    return StatTable(
        "Length in tokens",
        "Tokens per row (min / median / max) of what each config's `tokens` column counts, in "
        "each tokenizer, over every split; rows without a text to count are left out.",
        ["config", "rows", *names],
        rows,
    )


def documents_per_entry(data: Path) -> StatTable:
    """Usable related documents per entry, by origin (cited by editors or found by search)."""
    table = pq.read_table(data / DOCUMENTS, columns=["event_id", "origin", "status"]).to_pylist()
    events = {r["event_id"] for r in table}
    usable: dict[str, Counter[str]] = defaultdict(Counter)
    for r in table:
        if r["status"] == "ok":
            usable[r["origin"]][r["event_id"]] += 1
    rows = []
    for origin in sorted({r["origin"] for r in table}):
        per = [usable[origin][e] for e in sorted(events)]
        rows.append([origin, sum(per), round(st.fmean(per), 2), min(per), max(per)])
    return StatTable(
        "Usable documents per entry, by origin",
        f"Over {len(events)} entries; `human` documents are cited by the article's editors, "
        "`search` documents come from the search engine.",
        ["origin", "documents", "mean per entry", "min", "max"],
        rows,
    )


def crawl_outcomes(data: Path) -> StatTable:
    """How fetching every candidate document ended, by origin and status."""
    table = pq.read_table(data / DOCUMENTS, columns=["origin", "status"]).to_pylist()
    counts = Counter((r["status"], r["origin"]) for r in table)
    origins = sorted({o for _, o in counts})
    rows = [
        [status, *(counts[(status, o)] for o in origins), sum(counts[(status, o)] for o in origins)]
        for status in sorted({s for s, _ in counts}, key=lambda s: (s != "ok", s))
    ]
    return StatTable(
        "Crawl outcomes",
        "`dead`: 4xx answers other than 429; `rate_limited`: 429, or a Retry-After over the cap "
        "(fetched again by a later run); `robots`: disallowed by robots.txt; `blocked_address`: "
        "refused private or loopback address; `duplicate` and `mirror`: same text or a "
        "Wikipedia copy.",
        ["status", *origins, "total"],
        rows,
    )


def archived_copies(data: Path) -> StatTable:
    """How many documents came from web archives, by archive, and how many of them are usable."""
    table = pq.read_table(data / DOCUMENTS, columns=["status", "archive"]).to_pylist()
    found = Counter(r["archive"] for r in table if r["archive"])
    usable = Counter(r["archive"] for r in table if r["archive"] and r["status"] == "ok")
    rows = [[a, found[a], usable[a]] for a in sorted(found)]
    total = sum(r["status"] == "ok" for r in table)
    return StatTable(
        "Documents from web archives",
        f"{sum(usable.values())} of the {total} usable documents are archived copies of links "
        "the article's editors cited that were gone (dead, error or not HTML) when fetched: "
        "`citation` from the citation's own archive-url, `wayback` the Wayback Machine's "
        "snapshot closest to the citation's access date.",
        ["archive", "documents", "usable"],
        rows,
    )


def counts_by(
    data: Path,
    source: str,
    columns: Sequence[str],
    title: str,
    note: str,
) -> StatTable:
    """Rows of ``data/source`` counted by the values of ``columns``, sorted by those values.

    Only ``columns`` are read, one record batch at a time. The file is optional: a missing one
    gives an empty table whose note says so. A file without one of ``columns`` raises
    :class:`PublishError` naming the file and the column.
    """
    path = data / source
    header = [*columns, "count"]
    if not path.is_file():
        return StatTable(title, f"{note} `data/{source}` was not found in this build.", header, [])
    parquet = pq.ParquetFile(path)
    names = parquet.schema_arrow.names
    for column in columns:
        if column not in names:
            raise PublishError(
                f"{path}: no column {column!r} (has {', '.join(names)}); "
                f"the card's {title!r} table counts by it"
            )
    counts: Counter[tuple[str, ...]] = Counter()
    for batch in parquet.iter_batches(columns=list(columns)):
        values = [batch.column(c).to_pylist() for c in columns]
        counts.update(
            tuple("" if v is None else str(v) for v in row) for row in zip(*values, strict=True)
        )
    rows: list[list[Any]] = [[*key, n] for key, n in sorted(counts.items())]
    if rows:
        total = sum(counts.values())
        return StatTable(title, f"{note} {total} in all (`data/{source}`).", header, rows)
    return StatTable(title, f"{note} None in this build (`data/{source}` is empty).", header, [])


def wiki_rejections(data: Path) -> StatTable:
    """Pages the wiki stage read but did not select, by the rule that rejected them."""
    return counts_by(
        data,
        WIKI_REJECTED,
        ["reason"],
        "Pages rejected by the wiki stage",
        "Wiki pages read but not selected as events, by the rule that rejected them.",
    )


def summhay_drops(data: Path) -> StatTable:
    """Topics, subtopics, insights and documents left out of the haystacks, by step and reason."""
    return counts_by(
        data,
        SUMMHAY_DROPS,
        ["step", "kind", "reason"],
        "Items dropped while building haystacks",
        "Topics, subtopics, insights and documents the summhay stage left out, by step, kind "
        "and reason.",
    )


def lveval_drops(data: Path) -> StatTable:
    """QA items left out of the records, by step and reason."""
    return counts_by(
        data,
        LVEVAL_DROPS,
        ["step", "reason"],
        "QA items dropped while building records",
        "QA items the lveval stage left out (failed import or QA checks, a corpus too small "
        "for the largest level, rejected confusing facts or replacement rules), by step and "
        "reason.",
    )


@dataclass(frozen=True)
class Statistic:
    """A card statistic: how to compute its table, and the files under ``data/`` it reads (card
    provenance and ``publish`` deps)."""

    table: Callable[[Path], StatTable]
    sources: tuple[str, ...]

    def __call__(self, data: Path) -> StatTable:
        return self.table(data)


NAMED: dict[str, Statistic] = {
    "documents_per_entry": Statistic(documents_per_entry, (DOCUMENTS,)),
    "crawl_outcomes": Statistic(crawl_outcomes, (DOCUMENTS,)),
    "archived_copies": Statistic(archived_copies, (DOCUMENTS,)),
    "wiki_rejections": Statistic(wiki_rejections, (WIKI_REJECTED,)),
    "summhay_drops": Statistic(summhay_drops, (SUMMHAY_DROPS,)),
    "lveval_drops": Statistic(lveval_drops, (LVEVAL_DROPS,)),
}
"""Card statistics by the name a dataset's ``statistics`` lists."""


def metric_tables(name: str, metrics: dict[str, Any]) -> list[StatTable]:
    """Render a baselines metrics JSON: scalars in one table, each nested mapping as a matrix."""
    scalars = [[k, v] for k, v in metrics.items() if not isinstance(v, dict)]
    tables = [StatTable(f"{name}: settings", "", ["key", "value"], scalars)] if scalars else []
    for key, value in metrics.items():
        if not isinstance(value, dict):
            continue
        flat = _rows(value)
        columns = sorted({c for row in flat.values() for c in row}, key=_column_order)
        rows = [[label, *(row.get(c, "") for c in columns)] for label, row in flat.items()]
        tables.append(StatTable(f"{name}: {key}", "", ["", *columns], rows))
    return tables


def _rows(value: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    """Nested mappings -> ``{row label: {column: scalar}}``; the innermost keys are columns."""
    if all(not isinstance(v, dict) for v in value.values()):
        return {prefix or "value": value}
    out: dict[str, dict[str, Any]] = {}
    for k, v in value.items():
        label = f"{prefix} / {k}" if prefix else str(k)
        out.update(_rows(v, label) if isinstance(v, dict) else {label: {"value": v}})
    return out


def _column_order(column: str) -> tuple[int, str]:
    order = ["clean", "cfi", "kpr", "cfi_kpr"]
    return (order.index(column), "") if column in order else (len(order), column)


def _mb(n: int) -> float:
    return round(n / 1e6, 3)
