"""Reference baselines on LV-Eval-style records: evidence recall per retriever and a
generation baseline scored with the AK metric, by length level and variant.

Retrieval: every passage of a context is cut into chunks of ``chunk_words``; a retriever ranks
them for the question, and an evidence span counts as found when a top-k chunk overlaps it.
Generation: the context is cut in the middle to ``context_tokens`` (LV-Eval's truncation), the
question asked with LV-Eval's prompt through the LLM layer, the answer scored with AK.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from statistics import fmean
from typing import Any

from benchsmith_scoring.leval.metrics import length_instruction, output_length
from benchsmith_scoring.lveval import ak_score
from builders.lveval.records import EvalRecord
from pipelines.embed.chunk import chunk_spans
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.llm import Ask, LLMClient, TextAnswer
from pipelines.retrieval.memo import Memo, text_digest
from pipelines.retrieval.rankers import top

_UNIT = {"en": "words", "zh": "characters"}
_HEADER = re.compile(r"(?:^|\n\n)### Passage \d+\n")
EMPTY_CONTEXT = "empty_context: the record has no context to answer from"
PASSAGES_KEPT = 16_384
"""Passages whose chunk spans a :class:`Chunker` keeps: under 1 kB each (measured), so at most
about 15 MB; an 800-word passage has four chunks of 256 words."""
TRUNCATION_MARGIN = 16
"""Tokens a truncation window must hold beyond the kept ones, so that a token near the window's
cut (the one place a window's tokens could differ from the whole text's) is never used."""
_CHARS_PER_TOKEN = 6
"""First guess of a window's characters per token (MiniLM's WordPiece on the snapshot's
passages: about 4.9); a window too short for its tokens is doubled."""
_SPACE = re.compile(r"[ \t\n\r]")


class Chunker:
    """Character spans of ``size``-word chunks of contexts, never crossing a passage boundary.

    A passage's spans depend on its text alone, so they are computed once per distinct passage
    (a memo of the last ``kept`` by text hash) and shifted to where the passage sits."""

    def __init__(self, size: int, kept: int = PASSAGES_KEPT):
        self.size = size
        self.memo: Memo[list[tuple[int, int]]] = Memo(kept)
        self.asked = self.split = 0

    def spans(self, context: str) -> list[tuple[int, int]]:
        """The chunks of ``context``, in order."""
        heads = list(_HEADER.finditer(context))
        bounds = [(m.end(), heads[k + 1].start() if k + 1 < len(heads) else len(context))
                  for k, m in enumerate(heads)] or [(0, len(context))]  # fmt: skip
        out: list[tuple[int, int]] = []
        for start, end in bounds:
            out += [(start + a, start + b) for a, b in self._passage(context[start:end])]
        return out

    def _passage(self, text: str) -> list[tuple[int, int]]:
        self.asked += 1
        key = text_digest(text)
        spans = self.memo.get(key)
        if spans is None:
            self.split += 1
            spans = [(s.char_start, s.char_end) for s in chunk_spans(text, self.size)]
            self.memo.put(key, spans)
        return spans

    def stats(self) -> dict[str, float]:
        """Passages asked for, found in the memo, and split into chunks."""
        hits = self.asked - self.split
        rate = round(hits / self.asked, 4) if self.asked else 0.0
        return {"asked": self.asked, "cache_hits": hits, "split": self.split, "hit_rate": rate}


def evidence_found(
    record: EvalRecord, spans: Sequence[tuple[int, int]], scores: Sequence[float], top_k: int
) -> tuple[int, int]:
    """``(found, total)`` evidence spans of ``record`` overlapped by the top-k of ``spans``
    under ``scores``."""
    chosen = [spans[i] for i in top(scores, top_k)]
    evidence = record.evidence_positions
    found = sum(any(a < e.end and e.start < b for a, b in chosen) for e in evidence)
    return found, len(evidence)


def _offsets(text: str, tokenizer: Any) -> list[tuple[int, int]]:
    return tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                     verbose=False)["offset_mapping"]  # fmt: skip


def middle_truncate(text: str, budget: int, tokenizer: Any) -> str:
    """``text`` with its middle cut out so that at most ``budget`` tokens remain: the first
    ``budget // 2`` tokens and the last ``budget - budget // 2`` (LV-Eval's truncation).

    Only a head and a tail window are tokenized, each cut at an ASCII whitespace and widened
    until it holds its tokens and :data:`TRUNCATION_MARGIN` more; a tokenizer that splits words
    at whitespace (WordPiece, byte-level BPE, SentencePiece's metaspace) gives a window's
    tokens away from its cut exactly as in the whole text. Windows that would meet mean a text
    of at most about twice the budget: it is tokenized whole."""
    head, tail = budget // 2, budget - budget // 2
    width = (max(head, tail) + TRUNCATION_MARGIN) * _CHARS_PER_TOKEN
    while True:
        after = _SPACE.search(text, width)
        before = _last_space(text, len(text) - width)
        if after is None or before is None or after.start() >= before:
            return middle_truncate_whole(text, budget, tokenizer)
        first = _offsets(text[: after.start()], tokenizer)
        last = _offsets(text[before:], tokenizer)
        if len(first) >= head + TRUNCATION_MARGIN and len(last) >= tail + TRUNCATION_MARGIN:
            cut = first[head - 1][1] if head else 0
            return text[:cut] + text[before + last[len(last) - tail][0] :]
        width *= 2


def _last_space(text: str, end: int) -> int | None:
    """The position of the last ASCII whitespace at or before ``end``, if any."""
    at = max(text.rfind(c, 0, end + 1) for c in " \t\n\r")
    return at if at > 0 else None


def middle_truncate_whole(text: str, budget: int, tokenizer: Any) -> str:
    """:func:`middle_truncate` from the whole text's tokens (its result, at any length)."""
    offsets = _offsets(text, tokenizer)
    if len(offsets) <= budget:
        return text
    head, tail = budget // 2, budget - budget // 2
    cut = offsets[head - 1][1] if head else 0
    resume = offsets[len(offsets) - tail][0]
    return text[:cut] + text[resume:]


def answer_all(
    client: LLMClient,
    records: Iterable[EvalRecord],
    s: LVEvalBaselines,
    tokenizer: Any,
    description: str = "lveval: answers",
    total: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Answer and score every record, streaming; rows of the answers table in record order. A
    record with an empty context is not asked: its row fails with reason ``empty_context``.

    Records are read as the client asks (``llm.concurrency`` ahead); those waiting for their
    answer are kept without their context."""

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def ask(record: EvalRecord) -> Ask[TextAnswer]:
        instruction = ""
        if s.length_instruction:
            instruction = length_instruction(
                record.answers[0], template=s.lie_template, unit=s.lie_unit, count=count
            )
        variables = {
            "qa_id": record.qa_id,
            "question": record.input,
            "context": middle_truncate(record.context, s.context_tokens, tokenizer),
            "length_instruction": instruction,
        }
        return Ask("lveval/answer", variables, TextAnswer)

    waiting: deque[tuple[EvalRecord, bool]] = deque()  # (record without context, asked)

    def asks() -> Iterator[Ask[TextAnswer]]:
        for record in records:
            asked = bool(record.context.strip())
            waiting.append((replace(record, context=""), asked))
            if asked:
                yield ask(record)

    for outcome in client.ask_many(asks(), description, total):
        while not waiting[0][1]:
            yield _failed(waiting.popleft()[0], EMPTY_CONTEXT)
        record = waiting.popleft()[0]
        yield (
            _scored(record, outcome.value.text, s) if outcome.ok else _failed(record, outcome.error)
        )
    while waiting:  # records after the last one asked: none asked
        yield _failed(waiting.popleft()[0], EMPTY_CONTEXT)


def _failed(record: EvalRecord, reason: str) -> dict[str, Any]:
    return {**record.key(), "prediction": "", "status": "failed", "reason": reason,
            "score": None, "gate_passed": None, "output_words": None}  # fmt: skip


def _scored(record: EvalRecord, prediction: str, s: LVEvalBaselines) -> dict[str, Any]:
    result = ak_score(
        prediction,
        record.answers,
        record.answer_keywords,
        language=record.language,
        mode=s.metric_mode,
        threshold=getattr(s.ak_thresholds, record.language),
    )
    return {
        **record.key(),
        "prediction": prediction,
        "status": "ok",
        "reason": "",
        "score": result.score,
        "gate_passed": result.gate_passed,
        "output_words": output_length(prediction, _UNIT[record.language]),
    }


def by_level(
    rows: Iterable[Mapping[str, Any]], value: str, scale: float = 100
) -> dict[str, dict[str, float]]:
    """Mean of ``value`` (times ``scale``) per level and variant, levels in the order seen."""
    groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row.get(value) is not None:
            groups[row["level"]][row["variant"]].append(float(row[value]))
    return {
        level: {variant: round(scale * fmean(v), 2) for variant, v in variants.items()}
        for level, variants in groups.items()
    }
