"""The ``contamination`` stage: the configured model answers the benchmarks closed-book.

Every LV-Eval question is asked with an empty context and every WikiGenBench title written up
from zero documents, with the baselines' prompts, and scored with their metrics (AK with the
``lveval_baselines`` mode and thresholds; ROUGE-L F1 against the reference article). Writes
``items.parquet`` (per item: its event and creation month, the answer, its score, whether it is
flagged, or why it failed), ``contamination.json`` (DVC metrics: items probed, flagged shares
before and after the declared cutoff and by event month, the flagged items) and ``stats.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from builders.contamination import DATASET_NAMES, build_report
from pipelines.evaluation.contamination import (
    ITEM_SCHEMA,
    closed_book_responders,
    lveval_probes,
    probe_all,
    read_events,
    wikigen_probes,
)
from pipelines.evaluation.contamination_settings import ContaminationSettings
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import TableWriter, write_json
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats


def run_contamination(
    s: ContaminationSettings,
    *,
    qa: Path,
    entries: Path,
    out: Path,
    llm: LLMSettings,
    ak: LVEvalBaselines,
) -> StageStats:
    """Probe the datasets of ``s.datasets`` closed-book; ``ak`` holds the lveval baselines'
    AK mode and thresholds."""
    with stage_run("contamination", out) as run:
        events = read_events(entries)
        probes = {
            "lveval": (
                lveval_probes(qa, {e.event_id: e for e in events}, ak)
                if "lveval" in s.datasets
                else []
            ),
            "wikigenbench": wikigen_probes(events) if "wikigenbench" in s.datasets else [],
        }
        client = LLMClient.from_settings(llm, responders=closed_book_responders())
        run.client = client
        stats, rows = run.stats, []
        with TableWriter(run.scratch / "items.parquet", ITEM_SCHEMA) as written:
            for name, mine in probes.items():
                threshold = getattr(s.thresholds, name)
                what = f"contamination: {DATASET_NAMES[name]} closed-book"
                for row in probe_all(client, mine, threshold, what):
                    written.write(row)
                    rows.append(row)
                    stats.update(f"{name}_probed")
                    stats.update(f"{name}_{row['status']}")
                    stats.update(f"{name}_flagged", int(row["flagged"]))
                    if row["status"] != "ok":
                        stats.drop(f"{name}_{row['reason'].split(':', 1)[0]}")
        metrics: dict[str, Any] = {
            "lveval": f"AK ({ak.metric_mode})",
            "wikigenbench": "ROUGE-L F1",
        }
        report = build_report(
            rows,
            model=client.backend.model,
            cutoff=s.cutoff,
            datasets=s.datasets,
            metrics=metrics,
            thresholds=s.thresholds.model_dump(),
        )
        write_json(run.scratch / "contamination.json", report)
        run.extra["cutoff"] = report["cutoff"]
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    report = json.loads((out / "contamination.json").read_text("utf-8"))
    probed = ", ".join(f"{n} {DATASET_NAMES.get(k, k)}" for k, n in report["probed"].items())
    return (
        f"contamination: {report['model']} asked closed-book ({probed or 'nothing'}); "
        f"{len(report['flagged'])} flagged -> {out}/"
    )
