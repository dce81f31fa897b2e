"""Benchmark candidate-first reading of a multistream dump against a full scan of the same dump.

Builds a synthetic ``pages-articles-multistream`` dump in Wikimedia's documented format
(concatenated bz2 streams of 100 pages after a header stream, and a bz2 index of
``offset:page_id:title`` lines): the snapshot's pages spread among filler articles, ``--pages``
in all. The candidates are the snapshot's event titles plus ``--share`` of the fillers (a
month's new pages are about 0.2% of English Wikipedia). Both reads go through the dump reader to
Article records; the full scan parses every page's wikitext, the candidate-first read only the
candidates'. Run:

    python bench/multistream.py --pages 100000 --share 0.002
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipelines.sources.wiki.dump import read_dump  # noqa: E402
from pipelines.sources.wiki.multistream import StreamStats, candidate_pages, find_in_index  # noqa: E402
from tests.support.multistream import filler_page, split_export, write_multistream  # noqa: E402
from tests.support.snapshot import SNAPSHOT_XML  # noqa: E402

AT = datetime(2026, 11, 1, tzinfo=UTC)
"""Both reads record the same read time."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--share", type=float, default=0.002)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    header, real = split_export(SNAPSHOT_XML)
    fillers = args.pages - len(real)
    pages = [filler_page(1_000_000 + i, f"Filler article {i}") for i in range(fillers)]
    step = max(1, len(pages) // (len(real) + 1))
    for k, page in enumerate(real):
        pages.insert((k + 1) * step + k, page)
    work = Path(tempfile.mkdtemp(prefix="bench-multistream-"))
    dump, index = work / "multistream.xml.bz2", work / "index.txt.bz2"
    t0 = time.perf_counter()
    streams = write_multistream(header, pages, dump, index)
    built = time.perf_counter() - t0
    rng = random.Random(args.seed)
    chosen = rng.sample(range(fillers), int(fillers * args.share))
    titles = [t.split("<title>")[1].split("</title>")[0] for t in map(bytes.decode, real)]
    candidates = set(titles) | {f"Filler article {i}" for i in chosen}

    t0 = time.perf_counter()
    full = {
        a.title: a
        for a in read_dump(dump, creation_dates="log", read_at=AT)
        if a.title in candidates
    }
    full_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    lookup = find_in_index(index, candidates)
    stats = StreamStats()
    reader = read_dump(
        dump, creation_dates="log", read_at=AT, pages=candidate_pages(dump, lookup, stats)
    )
    found = {a.title: a for a in reader}
    candidate_s = time.perf_counter() - t0
    assert {t: a.to_row() for t, a in found.items()} == {t: a.to_row() for t, a in full.items()}

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"dump: {len(pages):,} pages in {streams:,} streams, {dump.stat().st_size / 1e6:.1f} MB "
          f"bz2 (built in {built:.1f} s); {len(candidates)} candidates")  # fmt: skip
    print("| read | pages parsed as wikitext | streams decompressed | wall s |")
    print("|---|---:|---:|---:|")
    print(f"| full scan | {len(pages):,} | {streams:,} (all) | {full_s:.1f} |")
    print(
        f"| candidate-first | {stats.pages_read:,} | {stats.streams_read:,} | {candidate_s:.1f} |"
    )
    print(f"ratio (full / candidate-first wall time): {full_s / candidate_s:.0f}x; same records")


if __name__ == "__main__":
    main()
