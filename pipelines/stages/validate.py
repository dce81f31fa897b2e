"""The ``validate`` stage: a reference panel measures each item's solvability and difficulty.

Every model of ``validate.models`` answers every LV-Eval QA item with its gold evidence only,
closed-book and with another item's evidence; judges whether each WikiGenBench entry's documents
support the sentences of its lead; and looks for each SummHay insight in its documents
(:mod:`pipelines.evaluation.validate_probes`). Writes ``answers.parquet`` (every answer, its
score or why it failed), ``labels.parquet`` (per item: ``solvable``, ``closed_book``,
``difficulty``, kept or dropped under ``min_solvable``), ``validate.json`` (DVC metrics: the
panel, difficulty per dataset, the noise floor, failures per model) and ``stats.json``.

The ``contamination`` stage asks the one configured model closed-book and splits the flags by
its knowledge cutoff; this stage's ``closed_book`` is the same question put to the whole panel,
beside the answers with the evidence that say whether the item can be answered at all.
"""

from __future__ import annotations

from pathlib import Path
from statistics import fmean
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from builders.contamination import DATASET_NAMES
from builders.validation import (
    distribution,
    label_items,
    model_failures,
    noise_floor,
    unlabelled,
    unsolvable,
)
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.evaluation.validate import (
    ANSWER_SCHEMA,
    LABEL_SCHEMA,
    answer_rows,
    ask_model,
    panel_llm_block,
    panel_responders,
)
from pipelines.evaluation.validate_probes import (
    AskPool,
    Probe,
    lveval_probes,
    summhay_probes,
    wikigen_probes,
)
from pipelines.evaluation.validate_settings import ValidateSettings
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import write_json
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats
from pipelines.synthesis.summhay_documents import inclusion_ask


def _probes(
    s: ValidateSettings, qa: Path, records: Path | None, entries: Path, chunks: Path,
    haystacks: Path, ak: LVEvalBaselines, pool: AskPool,
) -> list[Probe]:  # fmt: skip
    probes: list[Probe] = []
    if "lveval" in s.datasets:
        probes += lveval_probes(qa, s, ak, pool, records)
    if "wikigenbench" in s.datasets:
        probes += wikigen_probes(entries, chunks, s, pool)
    if "summhay" in s.datasets:
        probes += summhay_probes(haystacks, pool, inclusion_ask)
    return probes


def _write(path: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(fmean(known), 4) if known else None


def per_dataset(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per dataset: items labelled and dropped, and the mean ``solvable`` and ``closed_book``."""
    out: dict[str, dict[str, Any]] = {"items": {}, "dropped": {}, "solvable": {},
                                      "closed_book": {}}  # fmt: skip
    for d in sorted({r["dataset"] for r in rows}):
        mine = [r for r in rows if r["dataset"] == d]
        out["items"][d] = len(mine)
        out["dropped"][d] = sum(r["status"] == "dropped" for r in mine)
        out["solvable"][d] = _mean([r["solvable"] for r in mine])
        out["closed_book"][d] = _mean([r["closed_book"] for r in mine])
    return out


def run_validate(
    s: ValidateSettings,
    *,
    qa: Path,
    entries: Path,
    chunks: Path,
    haystacks: Path,
    records: Path | None = None,
    out: Path,
    llm: LLMSettings,
    ak: LVEvalBaselines,
) -> StageStats:
    """Ask the panel, label every item and write the outputs (see the module docstring)."""
    with stage_run("validate", out, models=True) as run:
        pool = AskPool()
        probes = _probes(s, qa, records, entries, chunks, haystacks, ak, pool)
        answers = []
        blocks: dict[str, dict[str, Any]] = {}
        panel = []
        for model in s.models:
            client = LLMClient.from_settings(model.settings(llm), responders=panel_responders())
            answers += ask_model(model, client, pool, probes)
            blocks[model.name] = client.stats()
            run.panel.append(client)
            backend = client.backend
            panel.append(
                {
                    "name": model.name,
                    "tier": model.tier,
                    "backend": backend.name,
                    "model": backend.model,
                }
            )
        _write(run.scratch / "answers.parquet", answer_rows(answers), ANSWER_SCHEMA)
        scored = [a for a, _ in answers]
        labels = label_items(scored, s.correct_at, s.difficulty.fail_share)
        rows = []
        for label in labels:
            reason = unlabelled(label) or unsolvable(label, s.min_solvable)
            rows.append(label.__dict__ | {"status": "dropped" if reason else "kept",
                                          "reason": reason})  # fmt: skip
            run.stats.update(f"{label.dataset}_items")
            if reason:
                run.stats.drop(f"{label.dataset}_{reason.split(':', 1)[0]}")
        _write(run.scratch / "labels.parquet", rows, LABEL_SCHEMA)
        report = {
            "panel": panel,
            "correct_at": s.correct_at,
            "fail_share": s.difficulty.fail_share,
            "min_solvable": s.min_solvable,
            **per_dataset(rows),
            "difficulty": distribution(labels),
            "noise_floor": noise_floor(scored, s.correct_at),
            "models": model_failures(scored),
        }
        write_json(run.scratch / "validate.json", report)
        run.extra["llm"] = panel_llm_block(blocks)
        run.extra["panel"] = blocks
        run.stats.show(panel=len(s.models), items=report["items"], dropped=report["dropped"])
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    h = stats.headline
    names = {**DATASET_NAMES, "summhay": "SummHay"}
    items = ", ".join(f"{n} {names.get(k, k)}" for k, n in h.get("items", {}).items())
    dropped = sum(h.get("dropped", {}).values())
    note = f", {dropped} dropped" if dropped else ""
    return f"validate: a panel of {h.get('panel', 0)} labelled {items or 'nothing'}{note} -> {out}/"
