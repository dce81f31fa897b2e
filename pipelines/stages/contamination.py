"""The ``contamination`` stage: the configured model answers the benchmarks closed-book.

Every LV-Eval question is asked with an empty context and every WikiGenBench title written up
from zero documents, with the baselines' prompts, and scored with their metrics (AK with the
``lveval_baselines`` mode and thresholds; ROUGE-L F1 against the reference article). Writes
``items.parquet`` (per item: its event and creation month, the answer, its score, whether it is
flagged, or why it failed), ``contamination.json`` (DVC metrics: items probed, flagged shares
before and after the declared cutoff and by event month, the flagged items) and ``stats.json``.
"""

from __future__ import annotations

from pathlib import Path

from builders.contamination import DATASET_NAMES, build_report
from pipelines.evaluation.contamination import (
    closed_book_responders,
    dataset_probes,
    metric_names,
    probe_datasets,
    read_events,
)
from pipelines.evaluation.contamination_settings import ContaminationSettings
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import write_json
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
    with stage_run("contamination", out, models=True) as run:
        probes = dataset_probes(s.datasets, qa, read_events(entries), ak)
        client = LLMClient.from_settings(llm, responders=closed_book_responders())
        run.client = client
        items = run.scratch / "items.parquet"
        rows = probe_datasets(client, probes, s.thresholds, items, run.stats)
        report = build_report(
            rows,
            model=client.backend.model,
            cutoff=s.cutoff,
            datasets=s.datasets,
            metrics=metric_names(ak),
            thresholds=s.thresholds.model_dump(),
        )
        write_json(run.scratch / "contamination.json", report)
        run.extra["cutoff"] = report["cutoff"]
        run.stats.show(
            model=report["model"], probed=report["probed"], flagged=len(report["flagged"])
        )
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    h = stats.headline
    probed = ", ".join(f"{n} {DATASET_NAMES.get(k, k)}" for k, n in h["probed"].items())
    failed = sum(stats.dropped.values())
    note = f", {failed} failed or not asked" if failed else ""
    return (
        f"contamination: {h['model']} asked closed-book ({probed or 'nothing'}{note}); "
        f"{h['flagged']} flagged -> {out}/"
    )
