"""The ``lveval_baselines`` key of ``params.yaml``: evidence recall per retriever and AK scores
of a generation baseline on LV-Eval-style records."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt

from benchsmith_scoring.lveval import THRESHOLDS
from builders.settings import Strict
from pipelines.retrieval.settings import RetrieverName


class AKThresholds(Strict):
    """AK's keyword-recall gate per language: below it a prediction scores 0 (LV-Eval's)."""

    en: float = Field(THRESHOLDS["en"], ge=0, le=1, description="English gate.")
    zh: float = Field(THRESHOLDS["zh"], ge=0, le=1, description="Chinese gate (jieba words).")


class LVEvalBaselines(Strict):
    """Evidence recall per retriever and a generation baseline on LV-Eval-style records."""

    retrievers: list[RetrieverName] = Field(
        default_factory=lambda: ["random", "bm25", "dense"],
        description="Retrievers ranking each context's chunks for the question (evidence recall).",
    )
    top_k: StrictInt = Field(5, ge=1, description="Chunks retrieved per question.")
    chunk_words: StrictInt = Field(256, ge=16, description="Passages are cut into such chunks.")
    answer: bool = Field(
        True, description="Also answer every record through the LLM layer and score it (AK)."
    )
    context_tokens: StrictInt = Field(
        31500,
        gt=0,
        description="Longer contexts are cut in the middle (LV-Eval: model length - 500).",
    )
    metric_mode: Literal["readme", "reference_code"] = Field(
        "readme", description="AK as LV-Eval's README describes it, or as its public code runs."
    )
    ak_thresholds: AKThresholds = Field(default_factory=AKThresholds)
    length_instruction: bool = Field(
        False, description="L-Eval's LIE: tell the model the reference answer's length."
    )
    lie_template: str = Field(
        "The suggested output length is around {n} {unit}.",
        description="The length instruction appended to the prompt ({n}: the length).",
    )
    lie_unit: Literal["words", "characters", "tokens"] = Field(
        "words", description="Unit the length instruction counts in."
    )
