"""Benchmark the whole build on a world grown K-fold from the snapshot: every stage's wall and
CPU seconds, peak RSS, and rows and MB out, at several K, and the growth per event between the
two largest.

For each K the script grows the world (``benchsmith snapshot scale``, reused when already
there), writes a workspace whose ``params.yaml`` is the project's with the world's paths and
the settings below, and runs every stage of ``dvc.yaml`` in its order as ``dvc repro`` would
(``benchsmith stage NAME``, one process each), without DVC's hashing. Every process computes on
one thread (``OMP_NUM_THREADS=1``, one tokenizer thread); the web stage's extraction workers are
processes of their own and count in its CPU time.

    python bench/scale.py --factors 1 10 --work /tmp/scale                      # snapshot levels
    python bench/scale.py --factors 10 100 --levels 16k 32k 64k 128k 256k --work /tmp/scale

Results go to ``WORK/scale.json`` (appended per K) and to the terminal as tables.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pyarrow.parquet as pq
import yaml

ROOT = Path(__file__).resolve().parents[1]
EVENTS_PER_COPY = 13
"""Event articles the snapshot selects; a K-fold world has K times as many."""


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        model = next(
            (line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
             if line.startswith("model name")), "")  # fmt: skip
    return {
        "cpu": model or platform.processor(),
        "cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
    }


def run(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> dict[str, float]:
    """Run ``cmd``; its wall and CPU seconds (with its children) and peak RSS in MB."""
    start = time.perf_counter()
    with log.open("ab") as out:
        process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd}; see {log}")
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
    }


def outputs(stage: dict[str, Any], workspace: Path) -> dict[str, float]:
    """Rows (parquet) and MB of a stage's outputs."""
    rows, size = 0, 0
    for entry in stage.get("outs", []) + stage.get("metrics", []):
        path = workspace / (entry if isinstance(entry, str) else next(iter(entry)))
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for file in files:
            size += file.stat().st_size
            if file.suffix == ".parquet":
                rows += pq.ParquetFile(file).metadata.num_rows
    return {"rows_out": rows, "mb_out": round(size / 1e6, 1)}


def workspace(world: Path, folder: Path, args: argparse.Namespace, factor: int) -> Path:
    """A folder with ``params.yaml`` pointing at ``world``; returns the params file."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text("utf-8"))
    summary = json.loads((world / "world.json").read_text("utf-8"))
    params["wiki"]["dump"]["path"] = summary["settings"]["wiki.dump.path"]
    params["web"]["archive"] = summary["settings"]["web.archive"]
    params["web"]["search_log"] = summary["settings"]["web.search_log"]
    params["embed"]["tokenizer_threads"] = 1
    params["publish"]["cards"] = str(ROOT / "cards")
    lveval = params["lveval"]
    lveval["levels"] = args.levels
    lveval["events"]["questions_per_event"] = args.questions
    lveval["events"]["multi_hop_per_event"] = args.multi_hop
    lveval["kpr"]["rules_file"] = None
    summhay = params["summhay"]
    per_copy = summhay["topics_from_events"]
    topics = {"scaled": factor * per_copy, "all": factor * EVENTS_PER_COPY, "snapshot": per_copy}
    summhay["topics_from_events"] = int(topics.get(args.summhay_topics, args.summhay_topics))
    if args.summhay_paper:  # SummHay's haystacks: 100 documents of about 750 words
        summhay.update(documents=100, words_per_document=750, subtopics=8, insights_per_subtopic=6)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), "utf-8")
    return path


def measure(factor: int, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """Grow the world for ``factor`` (unless there) and run every stage on it."""
    work: Path = args.work
    world, folder = work / f"world-{factor}", work / f"k{factor}"
    log = work / f"k{factor}.log"
    result: dict[str, Any] = {"factor": factor, "events": factor * EVENTS_PER_COPY, "stages": {}}
    if not (world / "world.json").is_file():
        cmd = ["benchsmith", "snapshot", "scale", "--factor", str(factor), "--out", str(world)]
        result["world"] = run(cmd, ROOT, env, log)
    params = workspace(world, folder, args, factor)
    if not args.stages:  # a whole build starts cold: no outputs, no LLM or embedding cache
        shutil.rmtree(folder / "data", ignore_errors=True)
        shutil.rmtree(folder / ".cache", ignore_errors=True)
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text("utf-8"))["stages"]
    for name, stage in stages.items():
        if args.stages and name not in args.stages:
            continue
        cmd = ["benchsmith", "stage", name, "--params", str(params)]
        try:
            figures = run(cmd, folder, env, log) | outputs(stage, folder)
        except SystemExit as failed:  # keep the stages measured so far
            result["failed"] = {"stage": name, "reason": str(failed)}
            print(f"K={factor} {name:18} FAILED: {failed}", flush=True)
            break
        result["stages"][name] = figures
        print(f"K={factor} {name:18} {json.dumps(figures)}", flush=True)
    return result


def table(results: list[dict[str, Any]]) -> str:
    """A Markdown table: CPU seconds per stage and K, then the per-event growth."""
    names = list(dict.fromkeys(n for r in results for n in r["stages"]))
    head = "| stage | " + " | ".join(f"K={r['factor']} CPU-s | RSS MB" for r in results)
    lines = [head + " |", "|---" * (1 + 2 * len(results)) + "|"]
    for name in names:
        cells = []
        for r in results:
            s = r["stages"].get(name, {})
            cells += [str(s.get("cpu_s", "-")), str(s.get("peak_rss_mb", "-"))]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if len(results) >= 2:
        a, b = results[-2], results[-1]
        lines += ["", f"CPU per event, K={b['factor']} over K={a['factor']}:"]
        for name in names:
            if name in a["stages"] and name in b["stages"] and a["stages"][name]["cpu_s"]:
                ratio = (b["stages"][name]["cpu_s"] / b["events"]) / (
                    a["stages"][name]["cpu_s"] / a["events"]
                )
                lines.append(f"- {name}: {ratio:.2f}x")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--factors", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--work", type=Path, required=True, help="Folder for worlds and builds")
    parser.add_argument("--levels", nargs="+", default=["2k", "4k", "8k"])
    parser.add_argument("--questions", type=int, default=2, help="lveval questions per event")
    parser.add_argument("--multi-hop", type=int, default=1, help="lveval multi-hop per event")
    parser.add_argument(
        "--summhay-topics",
        default="scaled",
        help="event topics: 'scaled' (K x the snapshot's 2), 'snapshot' (2), 'all' (one per "
        "event) or a number",
    )
    parser.add_argument(
        "--summhay-paper", action="store_true", help="SummHay's haystack size (100 x 750 words)"
    )
    parser.add_argument("--stages", nargs="*", help="Only these stages (default: all)")
    args = parser.parse_args()
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "DVC_NO_ANALYTICS": "1",
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip
    results = []
    for factor in args.factors:
        result = measure(factor, args, env) | {"machine": machine(), "levels": args.levels}
        results.append(result)
        with (args.work / "scale.json").open("a", encoding="utf-8") as out:
            out.write(json.dumps(result) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
