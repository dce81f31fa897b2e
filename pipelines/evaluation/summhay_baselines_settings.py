"""The ``summhay_baselines`` key of ``params.yaml``: retrieval bounds and summarize-then-judge
baselines on SummHay haystacks."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt

from builders.settings import Strict
from pipelines.retrieval.settings import RetrieverName

RETRIEVERS = ("random", "keywords", "bm25", "dense", "oracle")
"""SummHay's RAG retrievers: Rand, KWs, BM25, a sentence encoder (Vect), and the Oracle."""


class SummhayBaselines(Strict):
    """Retrieval bounds and generation baselines on SummHay haystacks."""

    context_tokens: StrictInt = Field(
        15000, gt=0, description="RAG context budget (SummHay: 15,000 tokens for 16k generators)."
    )
    retrievers: list[RetrieverName | Literal["oracle"]] = Field(
        default_factory=lambda: list(RETRIEVERS),
        description=(
            "Retrievers run on every haystack and subtopic: random (seeded), keywords "
            "(SummHay's KWs), bm25, dense (retrieval.dense_model) and oracle."
        ),
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
