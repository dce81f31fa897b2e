"""Reference baselines on LV-Eval-style records: evidence recall per retriever and a
generation baseline scored with the AK metric, by length level and variant.

Retrieval: every passage of a context is cut into chunks of ``chunk_words``; a retriever ranks
them for the question, and an evidence span counts as found when a top-k chunk overlaps it.
Generation: the context is cut in the middle to ``context_tokens`` (LV-Eval's truncation), the
question asked with LV-Eval's prompt through the LLM layer, the answer scored with AK.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any

from benchsmith_scoring.leval.metrics import length_instruction, output_length
from benchsmith_scoring.lveval import ak_score
from builders.lveval.records import EvalRecord
from pipelines.embed.chunk import chunk_spans
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.llm import Ask, LLMClient, TextAnswer
from pipelines.retrieval.rankers import Ranker, top

_UNIT = {"en": "words", "zh": "characters"}
_HEADER = re.compile(r"(?:^|\n\n)### Passage \d+\n")
EMPTY_CONTEXT = "empty_context: the record has no context to answer from"


def chunks(context: str, size: int) -> list[tuple[int, int]]:
    """Character spans of ``size``-word chunks, never crossing a passage boundary."""
    heads = list(_HEADER.finditer(context))
    bounds = [(m.end(), heads[k + 1].start() if k + 1 < len(heads) else len(context))
              for k, m in enumerate(heads)] or [(0, len(context))]  # fmt: skip
    out = []
    for start, end in bounds:
        out += [(start + s.char_start, start + s.char_end)
                for s in chunk_spans(context[start:end], size)]  # fmt: skip
    return out


def evidence_recall(record: EvalRecord, rank: Ranker, top_k: int, size: int) -> tuple[int, int]:
    """``(found, total)`` evidence spans of ``record`` overlapped by the top-k chunks."""
    context = record.context
    spans = chunks(context, size)
    scores = rank(record.input, [context[a:b] for a, b in spans])
    chosen = [spans[i] for i in top(scores, top_k)]
    evidence = record.evidence_positions
    found = sum(any(a < e.end and e.start < b for a, b in chosen) for e in evidence)
    return found, len(evidence)


def middle_truncate(text: str, budget: int, tokenizer: Any) -> str:
    """``text`` with its middle cut out so that at most ``budget`` tokens remain."""
    offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                        verbose=False)["offset_mapping"]  # fmt: skip
    if len(offsets) <= budget:
        return text
    head, tail = budget // 2, budget - budget // 2
    cut = offsets[head - 1][1] if head else 0
    resume = offsets[len(offsets) - tail][0]
    return text[:cut] + text[resume:]


def answer_all(
    client: LLMClient,
    records: Sequence[EvalRecord],
    s: LVEvalBaselines,
    tokenizer: Any,
) -> Iterable[dict[str, Any]]:
    """Answer and score every record; rows of the answers table. A record with an empty
    context is not asked: its row fails with reason ``empty_context``."""

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

    asked = [r for r in records if r.context.strip()]
    outcomes = iter(client.ask_many(map(ask, asked), "lveval: answers", len(asked)))
    for record in records:
        row = record.key()
        outcome = next(outcomes) if record.context.strip() else None
        if outcome is None or not outcome.ok:
            reason = outcome.error if outcome else EMPTY_CONTEXT
            yield {**row, "prediction": "", "status": "failed", "reason": reason,
                   "score": None, "gate_passed": None, "output_words": None}  # fmt: skip
            continue
        prediction = outcome.value.text
        result = ak_score(
            prediction,
            record.answers,
            record.answer_keywords,
            language=record.language,
            mode=s.metric_mode,
            threshold=getattr(s.ak_thresholds, record.language),
        )
        yield {
            **row,
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
