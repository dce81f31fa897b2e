"""Benchmark page extraction: pages/s of ``extract_many`` with 1 worker and with N workers.

Builds at least ``--docs`` documents by cycling the ``.html`` files under ``--pages`` (default
``snapshot/web/site``, or ``/tmp/web/site`` while the snapshot has no pages), then extracts them
in this process: ``extract_one`` in-process (no pool, for reference), then ``extract_many`` with
1 worker process and with N. Times include starting the workers (spawn, imports). Run:

    python bench/extract.py --docs 2000 --workers 4
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pipelines.sources.web.extract import Extraction, ExtractSettings, extract_many, extract_one

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "snapshot" / "web" / "site"
FALLBACK_PAGES = Path("/tmp/web/site")


def find_pages(folder: Path | None) -> tuple[Path, list[Path]]:
    """The ``.html`` files under ``folder``; by default the snapshot's, else the fallback's."""
    candidates = [folder] if folder else [PAGES, FALLBACK_PAGES]
    for candidate in candidates:
        pages = sorted(candidate.rglob("*.html")) if candidate.is_dir() else []
        if pages:
            return candidate, pages
    raise SystemExit(f"no .html pages under {' or '.join(str(c) for c in candidates)}")


def documents(folder: Path, pages: list[Path], count: int) -> Iterator[tuple[str, str, str]]:
    """``count`` ``(doc_id, html, url)`` documents cycled from ``pages``; URLs from their paths."""
    html = [p.read_text("utf-8", errors="replace") for p in pages]
    urls = [f"https://{p.relative_to(folder).as_posix()}" for p in pages]
    for i in range(count):
        yield f"doc-{i}", html[i % len(pages)], urls[i % len(pages)]


def measure(label: str, results: Iterator[Extraction], count: int) -> float:
    """Drain ``results``, print a table row (pages/s, seconds, statuses) and return pages/s."""
    start = time.perf_counter()
    statuses = Counter(r.status for r in results)
    seconds = time.perf_counter() - start
    assert sum(statuses.values()) == count, statuses
    shown = ", ".join(f"{k} {v:,}" for k, v in sorted(statuses.items()))
    print(f"| {count:,} | {label} | {count / seconds:,.1f} | {seconds:,.1f} | {shown} |")
    return count / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=Path, help="folder of .html pages (default: snapshot)")
    parser.add_argument("--docs", type=int, default=2000, help="documents to extract")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes for the parallel run (default: all cores)",
    )
    args = parser.parse_args()
    folder, pages = find_pages(args.pages)
    count = max(args.docs, len(pages))
    kb = sum(p.stat().st_size for p in pages) / len(pages) / 1e3

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}"
    )
    print(f"pages: {len(pages)} distinct .html under {folder}, mean {kb:,.1f} kB")
    print("| docs | extractor | pages/s | seconds | statuses |")
    print("|---:|---|---:|---:|---|")
    in_process = (extract_one(*doc) for doc in documents(folder, pages, count))
    measure("extract_one in-process, no pool (reference)", in_process, count)
    rates = {}
    for workers in (1, args.workers):
        results = extract_many(documents(folder, pages, count), ExtractSettings(workers=workers))
        rates[workers] = measure(f"extract_many, {workers} worker(s)", results, count)
    print(f"\n{args.workers} workers / 1 worker: {rates[args.workers] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
