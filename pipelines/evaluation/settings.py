"""Settings of the baselines stages: ``summhay_baselines``, ``lveval_baselines`` and
``wikigen_baselines`` (each its own key of ``params.yaml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt

from benchsmith_scoring.lveval import THRESHOLDS
from builders.settings import Strict

RetrieverName = Literal["random", "keywords", "tfidf", "bm25", "dense"]
"""Retrievers of the registry (pipelines.retrieval.rankers), for every baselines stage."""


RETRIEVERS = ("random", "keywords", "bm25", "dense", "oracle")
"""SummHay's RAG retrievers: Rand, KWs, BM25, a sentence encoder (Vect), and the Oracle."""


class SummhayBaselines(Strict):
    """Retrieval bounds and generation baselines on SummHay haystacks."""

    context_tokens: StrictInt = Field(
        15000, gt=0, description="RAG context budget (SummHay: 15,000 tokens for 16k generators)."
    )
    retrievers: list[RetrieverName | Literal["oracle"]] = Field(
        default_factory=lambda: list(RETRIEVERS)
    )
    summarize: bool = Field(
        True,
        description=(
            "Also summarize each retriever's context through the LLM layer and score it with the "
            "judge (coverage, citation, joint); off: retrieval bounds only."
        ),
    )
    metric_mode: Literal["paper", "reference_code"] = Field(
        "paper",
        description=(
            "A covered insight whose judge named no bullet, or one that does not exist: paper "
            "scores its citation 0; reference_code reads the bullet SummHay's public code reads "
            "(Python's negative indexing: none named reads the second-to-last bullet)."
        ),
    )


class AKThresholds(Strict):
    """AK's keyword-recall gate per language: below it a prediction scores 0 (LV-Eval's)."""

    en: float = Field(THRESHOLDS["en"], ge=0, le=1)
    zh: float = Field(THRESHOLDS["zh"], ge=0, le=1)


class LVEvalBaselines(Strict):
    """Evidence recall per retriever and a generation baseline on LV-Eval-style records."""

    retrievers: list[RetrieverName] = Field(default_factory=lambda: ["random", "bm25", "dense"])
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
    lie_template: str = "The suggested output length is around {n} {unit}."
    lie_unit: Literal["words", "characters", "tokens"] = "words"


class WikigenBaselines(Strict):
    """WikiGenBench's generation baselines (RR and PRR) and their citation scores."""

    retrievers: list[RetrieverName] = Field(
        default_factory=lambda: ["random", "tfidf", "bm25", "dense"],
        description="Rerankers of each entry's chunks for the event title; RR runs with each.",
    )
    top_k: StrictInt = Field(
        10, ge=1, description="Chunks read per article or section (WikiGenBench: 10 is best)."
    )
    context_tokens: StrictInt = Field(
        2048, gt=0, description="Token budget for those chunks (WikiGenBench: 2,048 for 4k models)."
    )
    methods: list[Literal["rr", "prr"]] = Field(
        default_factory=lambda: ["rr", "prr"],
        description="rr: retrieve-then-read; prr: plan an outline, then retrieve and write "
        "each section.",
    )
    prr_retriever: RetrieverName = Field(
        "dense", description="PRR's reranker (WikiGenBench's default is a dense one, DPR)."
    )
    prr_sections: StrictInt = Field(6, ge=1, description="Most sections a PRR outline may have.")
    generate: bool = Field(
        True,
        description="Also write articles through the LLM layer and score their citations; "
        "off: retrieval only.",
    )
    splits: list[str] | None = Field(None, description="Entry splits to run on; unset: all.")
