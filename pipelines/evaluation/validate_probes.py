"""What the reference panel is asked about each item, and how an answer is scored.

- **LV-Eval**: every QA item's question with the baselines' answer prompt, with its gold evidence
  alone as the context (LV-Eval's ``### Passage N`` layout), with an empty context, and with
  another item's evidence; scored with AK (the ``lveval_baselines`` mode and thresholds).
- **WikiGenBench**: every sentence of the reference article's lead, judged by the entailment
  prompt against the entry's ``premise_chunks`` chunks that BM25 ranks highest for it (and
  against another entry's); the score is the share of the lead's sentences supported.
- **SummHay**: every document of a haystack checked with the synthesis's inclusion prompt
  against all the haystack's insights; an insight's score is the share of its gold documents
  it is found in, and the share of the other documents it is found in is its shuffled score.

Asks are pooled: one ask several probes share (a SummHay document) is asked once.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from benchsmith_scoring.sentences import sentences
from builders.lveval.contexts import Block, Segment, render
from builders.summhay.records import Haystack, Insight
from builders.validation import CLOSED_BOOK, EVIDENCE, FULL_CONTEXT, SHUFFLED
from pipelines.errors import MissingInputError
from pipelines.evaluation.contamination import QA_COLUMNS, ak_of
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.evaluation.validate_settings import ValidateSettings
from pipelines.evaluation.wikigen import entails_ask
from pipelines.llm import Ask, TextAnswer
from pipelines.retrieval.bm25 import BM25
from pipelines.retrieval.rankers import top


@dataclass(frozen=True)
class Probe:
    """One item in one condition: the pooled asks it needs and how their answers score it."""

    dataset: str
    item_id: str
    condition: str
    asks: tuple[int, ...]
    score: Callable[[Sequence[Any]], float]
    """The item's score in [0, 1] from the validated answers of ``asks``, in order."""


@dataclass
class AskPool:
    """Every distinct ask of a run, once, in the order first needed."""

    asks: list[Ask[Any]] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict)

    def add(self, ask: Ask[Any]) -> int:
        """The index of ``ask`` in the pool (an equal ask already there is reused)."""
        key = json.dumps([ask.prompt, ask.variables], sort_keys=True, default=str)
        if key not in self._index:
            self._index[key] = len(self.asks)
            self.asks.append(ask)
        return self._index[key]


def derangement(n: int, seed: int) -> list[int]:
    """A seeded permutation of ``range(n)`` with no fixed point (each item gets another's
    evidence); ``[]`` when ``n`` < 2."""
    if n < 2:
        return []
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [order[(order.index(k) + 1) % n] for k in range(n)]


def _table(path: Path, columns: list[str] | None, what: str) -> list[dict[str, Any]]:
    if not path.is_file():
        raise MissingInputError(f"missing {path} ({what})", path)
    return pq.read_table(path, columns=columns).to_pylist()


def _evidence_context(row: Mapping[str, Any]) -> str:
    """The item's gold evidence alone, as LV-Eval lays out a context."""
    blocks = [
        Block(e["passage_id"], (Segment(e["text"], "evidence"),), supporting=True)
        for e in row["evidence"] or ()
    ]
    return render(blocks).context if blocks else ""


def _answer_score(values: Sequence[Any], row: Mapping[str, Any], ak: LVEvalBaselines) -> float:
    return ak_of(values[0].text, row, ak)


def full_contexts(records: Path | None) -> dict[str, str]:
    """Each QA item's context in its record at the shortest level, clean variant (none
    without records)."""
    if records is None or not records.is_dir():
        return {}
    found: dict[str, tuple[int, str]] = {}
    for path in sorted(records.glob("*.parquet")):
        columns = ["qa_id", "variant", "level_words", "context"]
        for r in pq.read_table(path, columns=columns).to_pylist():
            known = found.get(r["qa_id"])
            if r["variant"] == "clean" and (known is None or r["level_words"] < known[0]):
                found[r["qa_id"]] = (r["level_words"], r["context"])
    return {qa_id: context for qa_id, (_, context) in found.items()}


def lveval_probes(
    qa: Path, s: ValidateSettings, ak: LVEvalBaselines, pool: AskPool, records: Path | None = None
) -> list[Probe]:
    """Every QA item with its evidence, with its full context (``full_context``, from
    ``records``), closed-book and (``noise_floor``) with another's evidence."""
    rows = _table(qa, [*QA_COLUMNS, "evidence"], "the LV-Eval QA items")
    contexts = [_evidence_context(r) for r in rows]
    whole = full_contexts(records) if s.full_context else {}
    partner = derangement(len(rows), s.seed) if s.noise_floor else []
    probes = []
    for k, row in enumerate(rows):
        score = partial(_answer_score, row=row, ak=ak)
        conditions = [(EVIDENCE, contexts[k]), (CLOSED_BOOK, "")]
        if row["qa_id"] in whole:
            conditions.append((FULL_CONTEXT, whole[row["qa_id"]]))
        conditions += [(SHUFFLED, contexts[partner[k]])] if partner else []
        for condition, context in conditions:
            variables = {"qa_id": row["qa_id"], "question": row["question"],
                         "context": context, "length_instruction": ""}  # fmt: skip
            ask = pool.add(Ask("lveval/answer", variables, TextAnswer))
            probes.append(Probe("lveval", row["qa_id"], condition, (ask,), score))
    return probes


def _supported(values: Sequence[Any]) -> float:
    return sum(v.entails for v in values) / len(values)


def wikigen_probes(entries: Path, chunks: Path, s: ValidateSettings, pool: AskPool) -> list[Probe]:
    """Every entry's lead sentences against its own chunks and (``noise_floor``) another
    entry's; an entry without a lead or without chunks is not probed."""
    rows = _table(entries, ["event_id", "summary"], "the WikiGenBench entries")
    texts: dict[str, list[str]] = defaultdict(list)
    for c in _table(chunks, ["entry_id", "corpus", "text"], "the document chunks"):
        if c["corpus"] == "web":
            texts[c["entry_id"]].append(c["text"])
    rows = [r for r in rows if (r["summary"] or "").strip() and texts[r["event_id"]]]
    partner = derangement(len(rows), s.seed) if s.noise_floor else []
    bm25 = BM25()
    probes = []
    for k, row in enumerate(rows):
        lead = row["summary"]
        claims = [lead[a:b] for a, b in sentences(lead)]
        own = [(EVIDENCE, texts[row["event_id"]])]
        own += [(SHUFFLED, texts[rows[partner[k]]["event_id"]])] if partner else []
        for condition, candidates in own:
            asks = []
            for claim in claims:
                best = top(bm25(claim, candidates), s.premise_chunks)
                premise = "\n\n".join(candidates[i] for i in sorted(best))
                asks.append(pool.add(entails_ask(premise, claim)))
            probes.append(
                Probe("wikigenbench", row["event_id"], condition, tuple(asks), _supported)
            )
    return probes


def _found(values: Sequence[Any], insight_id: str) -> float:
    return sum(insight_id in v.present for v in values) / len(values)


def summhay_probes(
    haystacks: Path, pool: AskPool, inclusion: Callable[[str, Sequence[Insight]], Ask[Any]]
) -> list[Probe]:
    """Every insight, looked for in its gold documents and in the haystack's other documents
    (its id: ``topic_id/insight_id``); ``inclusion`` is the synthesis's ask of which insights
    a document states."""
    probes = []
    for row in _table(haystacks, None, "the SummHay haystacks"):
        haystack = Haystack.from_row(row)
        asks = {d.document_id: pool.add(inclusion(d.text, haystack.insights))
                for d in haystack.documents}  # fmt: skip
        for insight in haystack.insights:
            gold = set(haystack.gold(insight.insight_id))
            item = f"{haystack.topic.topic_id}/{insight.insight_id}"
            score = partial(_found, insight_id=insight.insight_id)
            inside = tuple(a for d, a in asks.items() if d in gold)
            outside = tuple(a for d, a in asks.items() if d not in gold)
            if inside:
                probes.append(Probe("summhay", item, EVIDENCE, inside, score))
            if outside:
                probes.append(Probe("summhay", item, SHUFFLED, outside, score))
    return probes
