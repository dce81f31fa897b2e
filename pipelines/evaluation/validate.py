"""The reference panel at work: every model answers the pooled asks, each probe's answers are
scored, and the items are labelled (:mod:`builders.validation`).

A model whose every ask fails stops the stage with its first error before any label is
written; a partial failure is kept per answer with its reason and counted per model, never
scored 0. The ``template`` backend reads what it is shown: it answers an LV-Eval question from
its evidence, says "I don't know." without any, and judges entailment and inclusion by the
words it finds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from builders.summhay import responders as summhay_responders
from builders.validation import PanelAnswer
from builders.wikigen import responders as wikigen_responders
from pipelines.errors import LLMError
from pipelines.evaluation.contamination import closed_book_responders
from pipelines.evaluation.validate_probes import AskPool, Probe
from pipelines.evaluation.validate_settings import PanelModel
from pipelines.llm import LLMClient, Outcome, Responder
from pipelines.llm.usage import FIELDS

ANSWER_CHARS = 500
"""The start of a text answer kept in ``answers.parquet``, for the review."""

ANSWER_SCHEMA = pa.schema(
    [
        pa.field("dataset", pa.string()),
        pa.field("item_id", pa.string()),
        pa.field("model", pa.string()),
        pa.field("tier", pa.string()),
        pa.field("condition", pa.string()),
        pa.field("status", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("score", pa.float64()),
        pa.field("answer", pa.string()),
    ]
)
"""One model's answer to one item in one condition."""

LABEL_SCHEMA = pa.schema(
    [
        pa.field("dataset", pa.string()),
        pa.field("item_id", pa.string()),
        pa.field("solvable", pa.float64()),
        pa.field("closed_book", pa.float64()),
        pa.field("difficulty", pa.string()),
        pa.field("answered", pa.int64()),
        pa.field("failed", pa.int64()),
        pa.field("status", pa.string()),
        pa.field("reason", pa.string()),
    ]
)
"""One item's labels; ``status`` is ``kept`` or ``dropped`` (under ``min_solvable``)."""


def panel_responders() -> dict[str, Responder]:
    """The template backend's readers of every prompt the panel asks."""
    return {
        **closed_book_responders(),
        "wikigen/entails": wikigen_responders.entails,
        "summhay/inclusion": summhay_responders.inclusion,
    }


def _text(outcome: Outcome[Any]) -> str:
    text = getattr(outcome.value, "text", "")
    return text[:ANSWER_CHARS] if isinstance(text, str) else ""


def score_probes(
    model: PanelModel, outcomes: Sequence[Outcome[Any]], probes: Iterable[Probe]
) -> list[tuple[PanelAnswer, str]]:
    """Each probe's answer from ``model`` (with the start of its text answer, '' for a
    judgement): a failed ask fails the answer with its reason; a scorer's ``ValueError`` (an
    item AK cannot score) is ``unscorable``."""
    out = []
    for probe in probes:
        got = [outcomes[k] for k in probe.asks]
        bad = next((o for o in got if not o.ok), None)
        score: float | None = None
        reason = bad.error if bad is not None else ""
        if bad is None:
            try:
                score = float(probe.score([o.value for o in got]))
            except ValueError as exc:
                reason = f"unscorable: {exc}"
        answer = PanelAnswer(probe.dataset, probe.item_id, model.name, model.tier,
                             probe.condition, score, reason)  # fmt: skip
        out.append((answer, _text(got[0]) if len(got) == 1 else ""))
    return out


def ask_model(
    model: PanelModel, client: LLMClient, pool: AskPool, probes: Sequence[Probe]
) -> list[tuple[PanelAnswer, str]]:
    """``model`` answers every pooled ask; its answers to ``probes``. A
    :class:`LLMError` when every ask failed."""
    what = f"validate: {model.name} ({client.backend.model})"
    outcomes = list(client.ask_many(pool.asks, what, len(pool.asks)))
    if outcomes and not any(o.ok for o in outcomes):
        raise LLMError(
            f"validate: reference model {model.name!r} ({client.backend.name} "
            f"{client.backend.model}) failed all {len(outcomes)} asks, the first with: "
            f"{outcomes[0].error}; no label was written"
        )
    return score_probes(model, outcomes, probes)


def answer_rows(answers: Iterable[tuple[PanelAnswer, str]]) -> list[dict[str, Any]]:
    """Rows of :data:`ANSWER_SCHEMA`."""
    return [
        {
            "dataset": a.dataset,
            "item_id": a.item_id,
            "model": a.model,
            "tier": a.tier,
            "condition": a.condition,
            "status": "ok" if a.score is not None else "failed",
            "reason": a.reason,
            "score": a.score,
            "answer": text,
        }
        for a, text in answers
    ]


def panel_llm_block(blocks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """One ``llm`` block for ``stats.json`` from each model's: counts summed, ``by_prompt``
    keyed ``<prompt> @ <model name>`` (what ``benchsmith estimate`` prices per model)."""
    merged: dict[str, Any] = {"backend": "panel", "model": ", ".join(blocks)}
    for key in (*FIELDS, "estimated_cost_usd"):
        merged[key] = sum(b.get(key, 0) for b in blocks.values())
    merged["estimated_cost_usd"] = round(merged["estimated_cost_usd"], 6)
    merged["by_prompt"] = {
        f"{prompt} @ {name}": used
        for name, block in blocks.items()
        for prompt, used in block.get("by_prompt", {}).items()
    }
    merged["prompt_versions"] = {
        p: v for block in blocks.values() for p, v in block.get("prompt_versions", {}).items()
    }
    reasons: dict[str, int] = {}
    for block in blocks.values():
        for reason, n in block.get("failure_reasons", {}).items():
            reasons[reason] = reasons.get(reason, 0) + n
    merged["failure_reasons"] = dict(sorted(reasons.items()))
    return merged
