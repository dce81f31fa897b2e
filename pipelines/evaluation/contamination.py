"""Closed-book probes of the configured model: the baselines' own prompts and metrics, with
nothing to read.

- **LV-Eval**: each QA item's question with LV-Eval's answer prompt and an empty context,
  scored with AK (the ``lveval_baselines`` mode and thresholds);
- **WikiGenBench**: each title's article written with the RR prompt from zero documents
  (WikiGenBench's "#Docs = 0"), scored with ROUGE-L F1 against the reference article.

A failed ask keeps its item, with the reason; it is never flagged. The ``template`` backend
reads only what it is shown, so it answers every probe "I don't know." and flags nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchsmith_scoring.leval.metrics import rouge
from benchsmith_scoring.lveval import ak_score
from builders.contamination import DATASET_NAMES, event_month
from builders.lveval import responders as lveval_responders
from builders.wikigen import responders as wikigen_responders
from builders.wikigen.generation import has_sentences, reference_article
from pipelines.errors import MissingInputError
from pipelines.evaluation.contamination_settings import ContaminationThresholds
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.llm import Ask, LLMClient, Responder, TextAnswer
from pipelines.outputs import TableWriter
from pipelines.stats import StageStats

REFUSAL = "I don't know."
"""What the template backend answers when it has nothing to read."""

QA_COLUMNS = ["qa_id", "language", "source", "question", "answers", "answer_keywords"]
ENTRY_COLUMNS = ["event_id", "title", "created_at", "summary", "sections"]

ITEM_SCHEMA = pa.schema(
    [
        pa.field("dataset", pa.string()),
        pa.field("item_id", pa.string()),
        pa.field("event_id", pa.string()),
        pa.field("event_created_at", pa.timestamp("ms", tz="UTC")),
        pa.field("event_month", pa.string()),
        pa.field("question", pa.string()),
        pa.field("answer", pa.string()),
        pa.field("status", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("score", pa.float64()),
        pa.field("flagged", pa.bool_()),
        pa.field("model", pa.string()),
    ]
)
"""One probed item: the question (or title) asked, the closed-book answer, its score."""


def _refusing(responder: Responder, written: Callable[[str], bool]) -> Responder:
    def answer(variables: Mapping[str, Any]) -> str:
        text = responder(variables)
        return text if written(text) else REFUSAL

    return answer


def closed_book_responders() -> dict[str, Responder]:
    """The template backend's readers of the two prompts; with nothing to read they say so."""
    return {
        "lveval/answer": _refusing(lveval_responders.answer, lambda text: bool(text.strip())),
        "wikigen/rr": _refusing(wikigen_responders.write_article, has_sentences),
    }


@dataclass(frozen=True)
class Event:
    """What a probe needs of a WikiGenBench entry."""

    event_id: str
    title: str
    created_at: datetime | None
    reference: str


@dataclass(frozen=True)
class Probe:
    """One item asked closed-book, and how its answer is scored."""

    dataset: str
    item_id: str
    event: Event | None
    question: str
    ask: Ask[TextAnswer]
    score: Callable[[str], float]


def _table(path: Path, columns: list[str], what: str) -> list[dict[str, Any]]:
    if not path.is_file():
        raise MissingInputError(f"missing {path} ({what})", path)
    return pq.read_table(path, columns=columns).to_pylist()


def read_events(entries: Path) -> list[Event]:
    """The WikiGenBench entries' events, with their reference articles."""
    return [
        Event(
            row["event_id"],
            row["title"],
            row["created_at"],
            reference_article(row["summary"] or "", (s["text"] for s in row["sections"] or ())),
        )
        for row in _table(entries, ENTRY_COLUMNS, "the wikigen entries")
    ]


def ak_of(text: str, row: Mapping[str, Any], ak: LVEvalBaselines) -> float:
    """AK of ``text`` for the QA item ``row``, as the lveval baselines score it."""
    language = row["language"]
    threshold = getattr(ak.ak_thresholds, language, None)
    result = ak_score(text, row["answers"] or [], row["answer_keywords"], language=language,
                      mode=ak.metric_mode, threshold=threshold)  # fmt: skip
    return result.score


def lveval_probes(qa: Path, events: Mapping[str, Event], ak: LVEvalBaselines) -> list[Probe]:
    """Every QA item's question with an empty context; an event item (``source``, an entry's
    event id) carries its event."""
    probes = []
    for row in _table(qa, QA_COLUMNS, "the LV-Eval QA items"):
        variables = {"qa_id": row["qa_id"], "question": row["question"], "context": "",
                     "length_instruction": ""}  # fmt: skip
        probes.append(
            Probe(
                "lveval",
                row["qa_id"],
                events.get(row["source"] or ""),
                row["question"],
                Ask("lveval/answer", variables, TextAnswer),
                partial(ak_of, row=row, ak=ak),
            )
        )
    return probes


def wikigen_probes(events: Iterable[Event]) -> list[Probe]:
    """Every title's article written from zero documents, against its reference article."""
    return [
        Probe(
            "wikigenbench",
            event.event_id,
            event,
            event.title,
            Ask("wikigen/rr", {"title": event.title, "documents": []}, TextAnswer),
            lambda text, reference=event.reference: rouge(text, reference, stem=True).rougeL,
        )
        for event in events
    ]


def _missing_reference(probe: Probe) -> str:
    if probe.dataset == "lveval" and not (probe.question or "").strip():
        return "no_question: the item has no question"
    if probe.dataset == "wikigenbench" and not (probe.event and probe.event.reference):
        return "no_reference: the entry has no reference article"
    return ""


def probe_all(
    client: LLMClient, probes: Sequence[Probe], threshold: float, description: str
) -> Iterator[dict[str, Any]]:
    """Ask every probe (an unscorable one is kept, failed, unasked) and score its answer; rows
    of :data:`ITEM_SCHEMA`, in order. ``flagged``: the score reaches ``threshold``."""
    unscorable = [_missing_reference(p) for p in probes]
    asked = [k for k, why in enumerate(unscorable) if not why]
    outcomes = client.ask_many((probes[k].ask for k in asked), description, len(asked))
    answered = dict(zip(asked, outcomes, strict=True))
    model = client.backend.model
    for k, probe in enumerate(probes):
        event = probe.event
        row: dict[str, Any] = {
            "dataset": probe.dataset,
            "item_id": probe.item_id,
            "event_id": event.event_id if event else None,
            "event_created_at": event.created_at if event else None,
            "event_month": event_month(event.created_at) if event else None,
            "question": probe.question,
            "model": model,
        }
        failed = {"answer": "", "status": "failed", "score": None, "flagged": False}
        outcome = answered.get(k)
        if outcome is None or not outcome.ok:
            yield row | failed | {"reason": outcome.error if outcome else unscorable[k]}
            continue
        answer = outcome.value.text
        try:
            score = float(probe.score(answer))
        except ValueError as exc:  # an item AK cannot score (no reference answer, a language)
            yield row | failed | {"answer": answer, "reason": f"unscorable: {exc}"}
            continue
        yield row | {"answer": answer, "status": "ok", "reason": "", "score": score,
                     "flagged": score >= threshold}  # fmt: skip


def dataset_probes(
    datasets: Sequence[str], qa: Path, events: Sequence[Event], ak: LVEvalBaselines
) -> dict[str, list[Probe]]:
    """The probes of LV-Eval's QA items and WikiGenBench's titles (none for a dataset not in
    ``datasets``)."""
    return {
        "lveval": (
            lveval_probes(qa, {e.event_id: e for e in events}, ak) if "lveval" in datasets else []
        ),
        "wikigenbench": wikigen_probes(events) if "wikigenbench" in datasets else [],
    }


def metric_names(ak: LVEvalBaselines) -> dict[str, str]:
    """The metric each dataset's answers are scored with, for the report."""
    return {"lveval": f"AK ({ak.metric_mode})", "wikigenbench": "ROUGE-L F1"}


def probe_datasets(
    client: LLMClient,
    probes: Mapping[str, Sequence[Probe]],
    thresholds: ContaminationThresholds,
    path: Path,
    stats: StageStats,
) -> list[dict[str, Any]]:
    """Ask and score every probe, dataset by dataset; write the rows to ``path``
    (:data:`ITEM_SCHEMA`) and return them."""
    rows: list[dict[str, Any]] = []
    with TableWriter(path, ITEM_SCHEMA) as written:
        for name, mine in probes.items():
            threshold = getattr(thresholds, name)
            what = f"contamination: {DATASET_NAMES[name]} closed-book"
            for row in probe_all(client, mine, threshold, what):
                written.write(row)
                rows.append(row)
                stats.update(f"{name}_probed")
                stats.count_status(row, name, name)
                stats.update(f"{name}_flagged", int(row["flagged"]))
    return rows
