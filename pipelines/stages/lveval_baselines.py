"""The ``lveval_baselines`` stage: evidence recall per retriever and the AK score of a
generation baseline, by length level and variant.

Writes ``retrieval.parquet`` (per record and retriever: evidence spans found in the top-k
chunks), ``answers.parquet`` (per record: prediction, AK score, output length, status),
``lveval.json`` (DVC metrics), ``ak_by_level.csv`` and ``recall_by_level.csv`` (DVC plots: score
against level) and ``stats.json``. Records are read one (dataset, level) file at a time.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from builders.lveval.records import VARIANTS, EvalRecord
from builders.lveval.responders import answer_responders
from pipelines.embed.models import display_name, load_tokenizer
from pipelines.errors import MissingInputError
from pipelines.evaluation.lveval import answer_all, by_level, evidence_recall
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import TableWriter, write_json
from pipelines.progress import progress_iter
from pipelines.retrieval.rankers import rankers
from pipelines.retrieval.settings import RetrievalSettings
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

RETRIEVAL_SCHEMA = pa.schema(
    [
        pa.field("qa_id", pa.string()),
        pa.field("dataset", pa.string()),
        pa.field("level", pa.string()),
        pa.field("level_words", pa.int64()),
        pa.field("variant", pa.string()),
        pa.field("retriever", pa.string()),
        pa.field("found", pa.int32()),
        pa.field("evidence", pa.int32()),
    ]
)
ANSWER_SCHEMA = pa.schema(
    [
        pa.field("qa_id", pa.string()),
        pa.field("dataset", pa.string()),
        pa.field("level", pa.string()),
        pa.field("level_words", pa.int64()),
        pa.field("variant", pa.string()),
        pa.field("prediction", pa.string()),
        pa.field("status", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("score", pa.float64()),
        pa.field("gate_passed", pa.bool_()),
        pa.field("output_words", pa.int64()),
    ]
)


def _plot(
    path: Path,
    table: dict[str, dict[str, Any]],
    sizes: dict[str, int],
    columns: Sequence[str] = VARIANTS,
) -> None:
    """Level (words) against one column per variant (or retriever), for ``dvc plots``."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["level_words", *columns])
        for level in sorted(sizes, key=sizes.__getitem__):
            scores = table.get(level, {})
            writer.writerow([sizes[level], *(scores.get(c, "") for c in columns)])


def run_lveval_baselines(
    s: LVEvalBaselines,
    *,
    records: Path,
    out: Path,
    llm: LLMSettings,
    retrieval: RetrievalSettings,
    embed_cache: Path | None = None,
) -> StageStats:
    """Score every record file under ``records``; dense vectors are kept in the embedding
    cache at ``embed_cache`` (the embed stage's) when given."""
    with stage_run("lveval_baselines", out) as run:
        files = sorted(records.glob("*.parquet"))
        if not files:
            raise MissingInputError(f"no records in {records} (the LV-Eval records)", records)
        ranks = rankers(s.retrievers, retrieval.seed, retrieval.dense_model, embed_cache)
        tokenizer = load_tokenizer(retrieval.tokenizer)
        client = None
        if s.answer:
            client = LLMClient.from_settings(llm, responders=answer_responders())
        recall_rows: list[dict[str, Any]] = []
        answer_rows: list[dict[str, Any]] = []
        sizes: dict[str, int] = {}
        run.client = client
        stats, scratch = run.stats, run.scratch
        with (
            TableWriter(scratch / "retrieval.parquet", RETRIEVAL_SCHEMA) as retrieval_out,
            TableWriter(scratch / "answers.parquet", ANSWER_SCHEMA, batch_rows=64) as answers_out,
        ):
            for path in files:
                table = pq.read_table(path, columns=list(EvalRecord.COLUMNS))
                rows = [EvalRecord.from_row(r) for r in table.to_pylist()]
                for record in progress_iter(rows, f"lveval baselines: {path.stem}"):
                    sizes[record.level] = record.level_words
                    stats.update("records")
                    for name, rank in ranks.items():
                        found, total = evidence_recall(record, rank, s.top_k, s.chunk_words)
                        row = record.key()
                        row |= {"retriever": name, "found": found, "evidence": total}
                        retrieval_out.write(row)
                        recall_rows.append(row | {"recall": found / max(total, 1)})
                if client is not None:
                    for row in answer_all(client, rows, s, tokenizer):
                        answers_out.write(row)
                        answer_rows.append({k: v for k, v in row.items() if k != "prediction"})
                        stats.update(f"answers_{row['status']}")
                        if row["status"] != "ok":
                            stats.drop(f"answer_{str(row['reason']).split(':', 1)[0]}")
                del rows
        recall: dict[str, Any] = {}
        grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in recall_rows:
            grouped[row["retriever"]].append(row)
        for name, rows in grouped.items():
            recall[name] = by_level(rows, "recall")
        ak = by_level(answer_rows, "score")
        metrics: dict[str, Any] = {
            "top_k": s.top_k,
            "chunk_words": s.chunk_words,
            "dense_model": display_name(retrieval.dense_model),
            "evidence_recall": recall,
        }
        scores = [r["score"] for r in answer_rows if r["score"] is not None]
        if client is not None:
            metrics |= {
                "metric_mode": s.metric_mode,
                "context_tokens": s.context_tokens,
                "length_instruction": s.length_instruction,
                "ak": ak,
                "output_words": by_level(answer_rows, "output_words", scale=1),
                "ak_mean": round(100 * fmean(scores), 2) if scores else None,
            }
        write_json(scratch / "lveval.json", metrics)
        _plot(scratch / "ak_by_level.csv", ak, sizes)
        clean = {
            level: {name: recall[name][level].get("clean", "") for name in recall}
            for level in sizes
        }
        _plot(scratch / "recall_by_level.csv", clean, sizes, list(recall))
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    metrics = json.loads((out / "lveval.json").read_text("utf-8"))
    return (
        f"lveval baselines: {stats.counts['records']} records; mean AK "
        f"{metrics.get('ak_mean', 'n/a')} -> {out}/"
    )
