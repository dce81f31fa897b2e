"""The one retriever registry: retrievers by name, as functions ``(query, texts) -> scores``,
for every baselines stage.

Dense passage vectors are kept in the embedding cache (by encoder and text) when one is given,
so a rerun embeds only texts it has not seen; within a run, the vectors and bags of words of
the texts ranked last stay in memory (bounded memos by text hash), so a chunk met again in
another record, level or variant is neither read nor tokenized again.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from pipelines.retrieval.bm25 import BM25
from pipelines.retrieval.memo import Memo, text_digest
from pipelines.retrieval.terms import Bags
from pipelines.retrieval.tfidf import TFIDF

Ranker = Callable[[str, list[str]], list[float]]

VECTORS_KEPT = 32_768
"""Passage vectors a dense retriever keeps in memory: about 1.8 kB each with a 384-dimension
encoder (MiniLM), so about 60 MB; the others are read back from the embedding cache."""
QUERIES_KEPT = 4_096
"""Query vectors kept: a question is asked at every level and in most variants."""


class CachedDense:
    """Dense scores under one encoder; passage vectors come from a memo of the last
    ``kept`` texts, then the embedding cache, and only then the encoder."""

    def __init__(self, model: str | None, cache: Path | None = None, kept: int = VECTORS_KEPT):
        from pipelines.embed.cache import EmbeddingCache
        from pipelines.retrieval.dense import shared_scorer

        self.model = model
        self.scorer = shared_scorer(model)
        self.fingerprint = self.scorer.encoder.fingerprint()
        self.cache = EmbeddingCache(cache) if cache else None
        self.memo: Memo[np.ndarray] = Memo(kept)
        self.queries: Memo[np.ndarray] = Memo(QUERIES_KEPT)
        self.asked = self.disk_hits = self.embedded = 0

    def vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The passage vector of every text; each distinct text not in the memo nor in the
        embedding cache is embedded once, in one call, in order of first occurrence."""
        from pipelines.embed.cache import digest_key

        digests = [text_digest(t) for t in texts]
        self.asked += len(digests)
        found = {d: self.memo.get(d) for d in dict.fromkeys(digests)}
        todo = {d: t for d, t in zip(digests, texts, strict=True) if found[d] is None}
        if todo and self.cache is not None:
            keys = {d: digest_key(self.fingerprint, d) for d in todo}
            stored = self.cache.get_many(list(keys.values()))
            for d, key in keys.items():
                found[d] = stored.get(key)
            self.disk_hits += len(stored)
            for d in [d for d in todo if found[d] is not None]:
                self.memo.put(d, found[d])  # type: ignore[arg-type]
                del todo[d]
        if todo:
            fresh = self.scorer.embed(list(todo.values()))
            self.embedded += len(todo)
            for d, vector in zip(todo, fresh, strict=True):
                found[d] = vector
                self.memo.put(d, vector)
            if self.cache is not None:
                self.cache.put_many(
                    (digest_key(self.fingerprint, d), v) for d, v in zip(todo, fresh, strict=True)
                )
        return [found[d] for d in digests]  # type: ignore[misc]

    def query(self, text: str) -> np.ndarray:
        """The query vector of ``text`` (kept: the same question comes back)."""
        key = text_digest(text)
        vector = self.queries.get(key)
        if vector is None:
            vector = self.scorer.embed([text], kind="query")[0]
            self.queries.put(key, vector)
        return vector

    def __call__(self, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        vectors = self.vectors(texts)
        q = self.query(query)
        return [float(v @ q) for v in vectors]

    def stats(self) -> dict[str, float]:
        """Chunk texts asked for, found in memory or in the embedding cache, and embedded."""
        hits = self.asked - self.embedded
        return {
            "asked": self.asked,
            "cache_hits": hits,
            "disk_hits": self.disk_hits,
            "embedded": self.embedded,
            "hit_rate": round(hits / self.asked, 4) if self.asked else 0.0,
        }


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
    bags = Bags()  # the bags of words BM25 and TF-IDF share
    for name in names:
        if name == "random":
            out[name] = partial(random_scores, seed=seed)
        elif name == "keywords":
            from builders.ranking import keyword_scores

            out[name] = keyword_scores
        elif name in ("tfidf", "bm25"):
            out[name] = TFIDF(bags) if name == "tfidf" else BM25(bags)
        elif name == "dense":
            out[name] = CachedDense(dense_model, cache)
        else:
            raise ValueError(f"unknown retriever {name!r}")
    return out


def memo_stats(ranks: Mapping[str, Ranker]) -> dict[str, dict[str, float]]:
    """What the retrievers' memos saved, for ``stats.json``: ``dense_chunks`` (chunk texts
    asked, found in memory or the embedding cache, embedded) and ``term_chunks`` (bags of words
    asked, found, tokenized), for the retrievers there are."""
    out: dict[str, dict[str, float]] = {}
    for rank in ranks.values():
        if isinstance(rank, CachedDense):
            out["dense_chunks"] = rank.stats()
        elif isinstance(rank, (BM25, TFIDF)):
            out["term_chunks"] = rank.bags.stats()
    return out


def top(scores: Sequence[float], k: int | None = None) -> list[int]:
    """Indices by descending score, ties in input order; the first ``k`` when given."""
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    return [int(i) for i in order[:k]]
