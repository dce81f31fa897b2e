"""``benchsmith rehydrate``: restore the text of documents published as URLs and hashes only.

Every URL is fetched again with the crawler's politeness (robots.txt, per-host delays, byte and
time caps, address guard), extracted as the web stage does, and checked against its published
content hash. Pages that changed or are gone are reported, never silently replaced.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import anyio
import pyarrow as pa
import pyarrow.parquet as pq

from builders.wikigen.documents import content_hash
from pipelines.errors import MissingInputError
from pipelines.outputs import staged_outputs, write_json
from pipelines.sources.web.extract import ExtractSettings, extract_one
from pipelines.sources.web.fetch import Fetcher, FetchResult
from pipelines.sources.web.settings import FetchSettings

REHYDRATED = "documents.parquet"
RESTORED, CHANGED, NOT_PUBLISHED = "restored", "changed", "not_published"


@dataclass(frozen=True)
class RehydrateReport:
    """How many documents came back identical, changed, or failed (by fetch status)."""

    counts: dict[str, int]
    changed: list[str]
    failed: dict[str, str]


def published_documents(folder: Path, config: str = "documents") -> pa.Table:
    """Every split of an export's documents config, as one table."""
    files = sorted((folder / config).glob("*.parquet"))
    if not files:
        raise MissingInputError(f"{folder / config}: no Parquet shards; is {folder} an export?")
    table = pa.concat_tables(pq.read_table(f) for f in files)
    missing = {"url", "content_hash"} - set(table.column_names)
    if missing:
        raise MissingInputError(f"{folder / config}: shards lack column(s) {', '.join(missing)}")
    return table


async def _fetch(urls: list[str], settings: FetchSettings) -> list[FetchResult]:
    async with Fetcher(settings) as fetcher:
        return await fetcher.fetch_all(urls)


def rehydrate(
    folder: Path, out: Path, fetch: FetchSettings, extract: ExtractSettings
) -> RehydrateReport:
    """Write ``out/documents.parquet``: the published rows plus ``text``, ``rehydrate_status``
    (restored, changed, not_published, or the fetch status) and ``rehydrate_reason``."""
    table = published_documents(folder)
    if "text" in table.column_names:
        table = table.drop_columns(["text"])
    rows = table.to_pylist()
    wanted = sorted({r["url"] for r in rows if r.get("content_hash")})
    fetched = dict(zip(wanted, anyio.run(_fetch, wanted, fetch), strict=True))
    texts, statuses, reasons = [], [], []
    report: Counter[str] = Counter()
    changed, failed = [], {}
    for row in rows:
        text, status, reason = _restore(row, fetched.get(row["url"]), extract)
        texts.append(text)
        statuses.append(status)
        reasons.append(reason)
        report[status] += 1
        if status == CHANGED:
            changed.append(row["url"])
        elif status not in (RESTORED, NOT_PUBLISHED):
            failed[row["url"]] = reason
    result = (
        table.append_column("text", pa.array(texts, pa.string()))
        .append_column("rehydrate_status", pa.array(statuses, pa.string()))
        .append_column("rehydrate_reason", pa.array(reasons, pa.string()))
    )
    summary = RehydrateReport(dict(sorted(report.items())), changed, failed)
    with staged_outputs(out) as scratch:
        pq.write_table(result, scratch / REHYDRATED, compression="zstd")
        write_json(scratch / "rehydrate.json", summary.__dict__)
    return summary


def _restore(
    row: dict, result: FetchResult | None, extract: ExtractSettings
) -> tuple[str | None, str, str]:
    """``(text, status, reason)`` of one published document."""
    if not row.get("content_hash"):
        return None, NOT_PUBLISHED, f"published without text (status {row.get('status')})"
    if result is None or result.status != "ok":
        status = result.status if result else "error"
        return None, status, result.reason if result else "not fetched"
    extraction = extract_one(row.get("doc_id") or row["url"], result.text, row["url"], extract)
    if not extraction.text:
        return None, extraction.status, extraction.reason
    fresh = content_hash(extraction.text)
    if fresh != row["content_hash"]:
        return (
            extraction.text,
            CHANGED,
            (
                f"content hash {fresh[:12]} differs from the published "
                f"{row['content_hash'][:12]}: the page changed since it was fetched"
            ),
        )
    return extraction.text, RESTORED, ""
