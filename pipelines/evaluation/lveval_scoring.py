"""The LV-Eval baselines over every record file: the retrieval and answers tables, the metrics
by length level and variant, and the plot files (score against level, for ``dvc plots``).

Records stream from one (dataset, level) file at a time, :data:`READ_ROWS` at a time; every
record is ranked by each retriever and, when a model answers, answered and scored with AK
(:mod:`pipelines.evaluation.lveval`) while the next ones are read and ranked.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from builders.lveval.records import VARIANTS, EvalRecord
from pipelines.embed.models import display_name
from pipelines.errors import EmptyInputError, MissingInputError
from pipelines.evaluation.lveval import Chunker, answer_all, by_level, evidence_found
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.llm import LLMClient
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.retrieval.rankers import Ranker
from pipelines.stats import StageStats

READ_ROWS = 16
"""Records read per batch: 16 records of 256k words take about 100 MB while they are read
(Arrow's batch and the Python strings; measured by ``bench/lveval_baselines.py``)."""
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


@dataclass
class Scored:
    """What scoring every record keeps for the metrics: recall rows (with ``recall``, None for
    a record without evidence), answer rows (without the prediction) and each level's length
    in words."""

    recall_rows: list[dict[str, Any]] = field(default_factory=list)
    answer_rows: list[dict[str, Any]] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)

    def recall_by_level(self) -> dict[str, dict[str, dict[str, float]]]:
        """Retriever -> level -> variant -> mean evidence recall (percent)."""
        grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in self.recall_rows:
            grouped[row["retriever"]].append(row)
        return {name: by_level(rows, "recall") for name, rows in grouped.items()}

    def ak_by_level(self) -> dict[str, dict[str, float]]:
        """Level -> variant -> mean AK score (percent) of the answered records."""
        return by_level(self.answer_rows, "score")


def record_files(records: Path) -> list[Path]:
    """The record files of the lveval stage's ``records`` folder, in name order. A folder that
    is there but empty means the stage ran and kept no item: the error says what its
    ``stats.json`` reported and where the reasons are."""
    files = sorted(records.glob("*.parquet"))
    if files:
        return files
    what = f"no records in {records} (the LV-Eval records)"
    if not records.is_dir():
        raise MissingInputError(what, records)
    raise EmptyInputError(what, records, _why_empty(records.parent))


def _why_empty(folder: Path) -> str:
    """What the lveval run in ``folder`` reported of its items, and where each drop's reason is."""
    try:
        stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"; its drops.parquet in {folder} gives every item left out with its reason"
    dropped = stats.get("dropped") or {}
    reasons = ", ".join(f"{k} {v}" for k, v in dropped.items()) or "none dropped"
    return (
        f" ({stats.get('counts', {}).get('qa_items', 0)} QA items kept; {reasons}); "
        f"{folder / 'drops.parquet'} gives every item left out with its step and reason, and "
        "the stage's settings (lveval.events, lveval.hub_sources) say which items it asks for"
    )


def read_records(path: Path, rows: int = READ_ROWS) -> Iterator[EvalRecord]:
    """The records of one file, read ``rows`` at a time (a level of long contexts never sits in
    memory whole). Without pre-buffering: pyarrow's default reads the byte ranges of every row
    group asked for ahead, so the whole file would be in memory after all."""
    with pq.ParquetFile(path, pre_buffer=False) as file:
        for batch in file.iter_batches(batch_size=rows, columns=list(EvalRecord.COLUMNS)):
            yield from map(EvalRecord.from_row, batch.to_pylist())


def count_rows(path: Path) -> int:
    """Rows of a Parquet file, from its footer."""
    with pq.ParquetFile(path) as file:
        return file.metadata.num_rows


def score_records(
    files: Sequence[Path],
    ranks: Mapping[str, Ranker],
    client: LLMClient | None,
    tokenizer: Any,
    s: LVEvalBaselines,
    folder: Path,
    stats: StageStats,
    chunker: Chunker | None = None,
) -> Scored:
    """Rank (and, with a ``client``, answer) every record of ``files``, streaming; write
    ``retrieval.parquet`` and ``answers.parquet`` under ``folder``. Chunk spans come from
    ``chunker`` (one for ``s.chunk_words`` when not given)."""
    scored = Scored()
    chunker = chunker or Chunker(s.chunk_words)
    with (
        TableWriter(folder / "retrieval.parquet", RETRIEVAL_SCHEMA) as retrieval_out,
        TableWriter(folder / "answers.parquet", ANSWER_SCHEMA, batch_rows=64) as answers_out,
    ):

        def ranked(records: Iterable[EvalRecord]) -> Iterator[EvalRecord]:
            for record in records:
                for row in rank_record(record, ranks, chunker, s.top_k, scored, stats):
                    retrieval_out.write(row)
                yield record

        for path in files:
            label, rows = f"lveval baselines: {path.stem}", count_rows(path)
            if client is None:
                for _ in ranked(progress_iter(read_records(path), label, rows)):
                    pass
                continue
            for row in answer_all(client, ranked(read_records(path)), s, tokenizer, label, rows):
                answers_out.write(row)
                scored.answer_rows.append({k: v for k, v in row.items() if k != "prediction"})
                stats.count_status(row, "answers", "answer")
    return scored


def rank_record(
    record: EvalRecord,
    ranks: Mapping[str, Ranker],
    chunker: Chunker,
    top_k: int,
    scored: Scored,
    stats: StageStats,
) -> Iterator[dict[str, Any]]:
    """The retrieval rows of one record, one per retriever; its chunks are cut once for all."""
    scored.sizes[record.level] = record.level_words
    stats.update("records")
    if not record.context.strip():
        stats.update("records_empty_context")
    spans = chunker.spans(record.context)
    texts = [record.context[a:b] for a, b in spans]
    for name, rank in ranks.items():
        found, total = evidence_found(record, spans, rank(record.input, texts), top_k)
        row = record.key() | {"retriever": name, "found": found, "evidence": total}
        recall = found / total if total else None  # nothing to find: no recall
        scored.recall_rows.append(row | {"recall": recall})
        yield row


def lveval_metrics(
    scored: Scored, s: LVEvalBaselines, dense_model: str | None, *, answered: bool
) -> dict[str, Any]:
    """``lveval.json``: evidence recall by retriever, and the AK scores when a model answered."""
    metrics: dict[str, Any] = {
        "top_k": s.top_k,
        "chunk_words": s.chunk_words,
        "dense_model": display_name(dense_model),
        "evidence_recall": scored.recall_by_level(),
    }
    if answered:
        scores = [r["score"] for r in scored.answer_rows if r["score"] is not None]
        metrics |= {
            "metric_mode": s.metric_mode,
            "context_tokens": s.context_tokens,
            "length_instruction": s.length_instruction,
            "ak": scored.ak_by_level(),
            "output_words": by_level(scored.answer_rows, "output_words", scale=1),
            "ak_mean": round(100 * fmean(scores), 2) if scores else None,
        }
    return metrics


def write_plots(folder: Path, scored: Scored) -> None:
    """``ak_by_level.csv`` (a column per variant) and ``recall_by_level.csv`` (clean records'
    evidence recall, a column per retriever)."""
    write_plot(folder / "ak_by_level.csv", scored.ak_by_level(), scored.sizes)
    recall = scored.recall_by_level()
    clean = {
        level: {name: recall[name].get(level, {}).get("clean", "") for name in recall}
        for level in scored.sizes
    }
    write_plot(folder / "recall_by_level.csv", clean, scored.sizes, list(recall))


def write_plot(
    path: Path,
    table: Mapping[str, Mapping[str, Any]],
    sizes: Mapping[str, int],
    columns: Sequence[str] = VARIANTS,
) -> None:
    """Level (words) against one column per variant (or retriever), for ``dvc plots``."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["level_words", *columns])
        for level in sorted(sizes, key=sizes.__getitem__):
            scores = table.get(level, {})
            writer.writerow([sizes[level], *(scores.get(c, "") for c in columns)])
