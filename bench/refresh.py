"""Benchmark a refresh: the work redone when one event is added, against the full build.

Three temporary copies of the project, each with empty caches:
- ``full``: ``dvc repro`` with the snapshot's window (13 events), the reference;
- ``refresh``: ``dvc repro`` with the window ending 2026-10-31 (12 events), then
  ``benchsmith refresh --until 2026-12-31`` (the 13th event, created 3 November 2026).
Work is counted from every stage's ``stats.json`` after the run that wrote it: model calls (the
template backend, cached as a real model would be), texts embedded, and pages fetched from the
network; pages replayed from the archive and seconds are shown beside them. A stage the refresh
did not re-run did no work. The table gives, per stage, whether the refresh re-ran it, and each
figure in the refresh against the full build.

    python bench/refresh.py
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.dvc_project import copy_project, tool  # noqa: E402

KINDS = ("model calls", "texts embedded", "pages fetched")
"""The work a refresh should not redo: what costs money, GPU time or someone else's server."""
ASIDE = ("pages replayed", "seconds")


def work(stats: dict) -> dict[str, float]:
    """One stage run's work by kind, and the figures shown beside it."""
    counts = stats.get("counts", {})
    pages = counts.get("urls_fetched", 0)
    replayed = stats.get("mode") == "replay"
    return {
        "model calls": (stats.get("llm") or {}).get("calls", 0),
        "texts embedded": counts.get("embedded", 0),
        "pages fetched": 0 if replayed else pages,
        "pages replayed": pages if replayed else 0,
        "seconds": round(stats.get("duration_s", 0.0), 1),
    }


def stats_of(project: Path) -> dict[str, dict]:
    """Every stage's ``stats.json`` (publish's aside)."""
    return {
        p.parent.name: json.loads(p.read_text())
        for p in (project / "data").glob("*/stats.json")
        if p.parent.name != "publish"
    }


def build(project: Path, until: str | None) -> float:
    """``dvc repro`` in ``project`` (the window ending ``until`` when given); seconds taken."""
    if until:
        params = project / "params.yaml"
        loaded = yaml.safe_load(params.read_text())
        loaded["wiki"]["created_before"] = until
        params.write_text(yaml.safe_dump(loaded, sort_keys=False))
    start = time.perf_counter()
    tool(project, "dvc", "repro")
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        full = copy_project(Path(tmp) / "full", lock=False)
        full_s = build(full, None)
        full_stats = stats_of(full)
        refresh = copy_project(Path(tmp) / "refresh", lock=False)
        build(refresh, "2026-10-31")
        before = stats_of(refresh)
        start = time.perf_counter()
        tool(refresh, "benchsmith", "refresh", "--until", "2026-12-31", "--version", "2026.12.0")
        refresh_s = time.perf_counter() - start
        after = stats_of(refresh)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"full build (13 events): {full_s:.0f} s; refresh adding the 13th: {refresh_s:.0f} s\n")
    columns = (*KINDS, *ASIDE)
    print("| stage | re-run | " + " | ".join(f"{k}: refresh / full" for k in columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    totals = {k: [0.0, 0.0] for k in columns}
    for stage in sorted(full_stats):
        ran = after.get(stage) != before.get(stage)
        new = work(after[stage]) if ran else dict.fromkeys(columns, 0)
        ref = work(full_stats[stage])
        for k in columns:
            totals[k][0] += new[k]
            totals[k][1] += ref[k]
        cells = " | ".join(f"{new[k]:g} / {ref[k]:g}" if ref[k] else "–" for k in columns)
        print(f"| {stage} | {'yes' if ran else 'no'} | {cells} |")
    cells = " | ".join(
        f"{t[0]:g} / {t[1]:g} ({t[0] / t[1]:.1%})" if t[1] else "0 / 0" for t in totals.values()
    )
    print(f"| **all** | | {cells} |")
    done = sum(totals[k][0] for k in KINDS)
    reference = sum(totals[k][1] for k in KINDS)
    print(f"\nwork redone: {done:g} of {reference:g} units ({done / reference:.1%}) of "
          f"{', '.join(KINDS)}; one event of 13 is 7.7%")  # fmt: skip


if __name__ == "__main__":
    main()
