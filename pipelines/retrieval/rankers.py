"""The one retriever registry: retrievers by name, as functions ``(query, texts) -> scores``,
for every baselines stage.

Dense passage vectors are kept in the embedding cache (by encoder and text) when one is given,
so a rerun embeds only texts it has not seen.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np

Ranker = Callable[[str, list[str]], list[float]]


class CachedDense:
    """Dense scores under one encoder; passage vectors come from the embedding cache."""

    def __init__(self, model: str | None, cache: Path | None = None):
        from pipelines.embed.cache import EmbeddingCache
        from pipelines.retrieval.dense import shared_scorer

        self.scorer = shared_scorer(model)
        self.fingerprint = self.scorer.encoder.fingerprint()
        self.cache = EmbeddingCache(cache) if cache else None
        self.vectors: dict[str, np.ndarray] = {}

    def _fill(self, texts: list[str]) -> None:
        from pipelines.embed.cache import text_key

        todo = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if todo and self.cache is not None:
            keys = {t: text_key(self.fingerprint, t) for t in todo}
            found = self.cache.get_many(list(keys.values()))
            self.vectors.update({t: found[k] for t, k in keys.items() if k in found})
            todo = [t for t in todo if t not in self.vectors]
        if todo:
            fresh = self.scorer.embed(todo)
            self.vectors.update(zip(todo, fresh, strict=True))
            if self.cache is not None:
                self.cache.put_many(
                    (text_key(self.fingerprint, t), v) for t, v in zip(todo, fresh, strict=True)
                )

    def __call__(self, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        self._fill(texts)
        q = self.scorer.embed([query], kind="query")[0]
        return [float(self.vectors[t] @ q) for t in texts]


def random_scores(query: str, texts: list[str], *, seed: int) -> list[float]:
    """Random scores seeded by the query and its candidates, so a ranking never depends on what
    else was ranked before it (a refresh adding items leaves old items' rankings alone)."""
    digest = hashlib.sha256("\x00".join([query, *texts]).encode()).hexdigest()[:16]
    rng = random.Random(f"{seed}:{digest}")
    return [rng.random() for _ in texts]


def rankers(
    names: Sequence[str], seed: int, dense_model: str | None, cache: Path | None = None
) -> dict[str, Ranker]:
    """The named retrievers (random, keywords, tfidf, bm25, dense); the dense model loads only
    when asked for, its vectors kept in the embedding cache at ``cache`` when given."""
    out: dict[str, Ranker] = {}
    for name in names:
        if name == "random":
            out[name] = partial(random_scores, seed=seed)
        elif name == "keywords":
            from builders.ranking import keyword_scores

            out[name] = keyword_scores
        elif name == "tfidf":
            from pipelines.retrieval.tfidf import tfidf_scores

            out[name] = tfidf_scores
        elif name == "bm25":
            from pipelines.retrieval.bm25 import bm25_scores

            out[name] = bm25_scores
        elif name == "dense":
            out[name] = CachedDense(dense_model, cache)
        else:
            raise ValueError(f"unknown retriever {name!r}")
    return out


def top(scores: Sequence[float], k: int | None = None) -> list[int]:
    """Indices by descending score, ties in input order; the first ``k`` when given."""
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    return [int(i) for i in order[:k]]
