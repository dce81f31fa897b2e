"""Benchmark the dump reader: pages/s and peak memory at two dump sizes.

Builds synthetic exports by repeating the snapshot's pages under new titles and ids, then reads each
one in a fresh process with the streaming dump reader (1 worker, then N worker processes) and, for
comparison, with a whole-tree ``ElementTree.parse`` (what a naive reader does; it parses no
wikitext). Memory is the main process's peak RSS above its baseline after imports (worker
processes hold one batch each and are not counted). Run:

    python bench/wiki_dump.py --sizes 2000 20000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "snapshot" / "wiki" / "export.xml"


def build_dump(pages: int, path: Path) -> None:
    """Write an export with ``pages`` pages cycled from the snapshot under new titles and ids."""
    text = SNAPSHOT.read_text("utf-8")
    head = text[: text.index("  <page>")]
    blocks = re.findall(r"  <page>.*?</page>\n", text, flags=re.S)
    with path.open("w", encoding="utf-8") as out:
        out.write(head)
        for i in range(pages):
            block = blocks[i % len(blocks)]
            title = rf"<title>\1 (copy {i})</title>"
            block = re.sub(r"<title>(.*?)</title>", title, block, count=1)
            block = re.sub(r"<id>\d+</id>", f"<id>{i + 1}</id>", block, count=1)
            out.write(block)
        out.write("</mediawiki>\n")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(path: str, mode: str, workers: int) -> dict[str, float]:
    """Read ``path`` in this process and return pages, seconds and peak RSS growth (MB)."""
    import xml.etree.ElementTree as ET

    from pipelines.sources.wiki.dump import read_dump

    baseline = _peak_rss_mb()
    start = time.perf_counter()
    if mode == "stream":
        articles = read_dump(Path(path), skip_sections=["References"], workers=workers)
        pages = sum(1 for _ in articles)
    else:
        tree = ET.parse(path)
        pages = sum(1 for e in tree.getroot() if e.tag.endswith("page"))
    seconds = time.perf_counter() - start
    return {"pages": pages, "seconds": seconds, "peak_rss_growth_mb": _peak_rss_mb() - baseline}


def _run_child(path: Path, mode: str, workers: int) -> dict[str, float]:
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--measure",
            str(path),
            "--mode",
            mode,
            "--workers",
            str(workers),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="stream", help=argparse.SUPPRESS)
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes for the parallel run (default: all cores)",
    )
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.mode, args.workers)))
        return

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}"
    )
    print("| pages | dump MB | reader | pages/s | peak RSS growth MB |")
    print("|---:|---:|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            path = Path(tmp) / f"dump-{size}.xml"
            build_dump(size, path)
            mb = path.stat().st_size / 1e6
            runs = (
                ("stream", 1, "benchsmith dump reader, 1 worker"),
                ("stream", args.workers, f"benchsmith dump reader, {args.workers} workers"),
                ("tree", 1, "ElementTree.parse, no wikitext parsing (reference)"),
            )
            for mode, workers, label in runs:
                r = _run_child(path, mode, workers)
                assert r["pages"] == size, r
                print(
                    f"| {size:,} | {mb:,.0f} | {label} | {r['pages'] / r['seconds']:,.0f} "
                    f"| {r['peak_rss_growth_mb']:,.0f} |"
                )


if __name__ == "__main__":
    main()
