"""TF-IDF scores of documents for a query: cosine of smoothed TF-IDF vectors, from bags of words.

WikiGenBench compares TF-IDF with BM25 and dense rerankers. Tokens are bm25s's (lower-cased,
English stop words removed), so the two sparse retrievers see the same words.

The document frequencies are per record (the corpus being ranked is a record's chunks), and
unlike BM25 a chunk's norm needs the idf of every term it holds, not only the query's: they
come from the cached bags with numpy, the idf computed once per distinct document frequency,
and each sum is Python's ``sum`` over the same floats in the same order as the formula's walk
over each text's terms, so every score is the same float (the tests compare them).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from pipelines.retrieval.terms import Bag, Bags, stack, tokenize


def _idf(n: int, df: int) -> float:
    """``ln((1 + n) / (1 + df)) + 1`` (scikit-learn's smoothed idf)."""
    return math.log((1 + n) / (1 + df)) + 1


def _unit(counts: Mapping[str, int], df: Mapping[str, int], n: int) -> dict[str, float]:
    """The query's TF-IDF vector, normalised."""
    weights = {t: k * _idf(n, df.get(t, 0)) for t, k in counts.items()}
    norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
    return {t: w / norm for t, w in weights.items()}


def tfidf_from_bags(
    query: Sequence[str], bags: Sequence[Bag], vocabulary: Mapping[str, int]
) -> list[float]:
    """Cosine of the query's tokens and each bag under TF-IDF weights over ``bags``."""
    n = len(bags)
    if not n:
        return []
    entries = stack(bags)
    terms, local, df = np.unique(entries.ids, return_inverse=True, return_counts=True)
    levels, level_of = np.unique(df, return_inverse=True)
    idf = np.array([_idf(n, d) for d in levels.tolist()], dtype=np.float64)[level_of]
    weights = entries.counts * idf[local]
    squares = (weights * weights).tolist()
    norms = [math.sqrt(sum(squares[a:b])) or 1.0 for a, b in entries.bounds]
    ids = {t: vocabulary.get(t) for t in dict.fromkeys(query)}
    at = {t: int(np.searchsorted(terms, i)) for t, i in ids.items() if i is not None}
    present = {t: k for t, k in at.items() if k < len(terms) and terms[k] == ids[t]}
    q = _unit(Counter(query), {t: int(df[k]) for t, k in present.items()}, n)
    query_weight = np.zeros(len(terms), dtype=np.float64)
    for t, k in present.items():
        query_weight[k] = q[t]
    parts = (weights / np.array(norms)[entries.owner] * query_weight[local]).tolist()
    return [sum(parts[a:b], 0.0) for a, b in entries.bounds]


class TFIDF:
    """TF-IDF as a retriever ``(query, texts) -> scores``, the texts' bags kept in ``bags``."""

    def __init__(self, bags: Bags | None = None):
        self.bags = bags if bags is not None else Bags()

    def __call__(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        bags = self.bags.of(texts)
        return tfidf_from_bags(tokenize([query])[0], bags, self.bags.vocabulary)


def tfidf_scores(query: str, texts: Sequence[str]) -> list[float]:
    """Cosine of ``query`` and each text under TF-IDF weights (idf ``ln((1+n)/(1+df)) + 1``)."""
    return TFIDF(Bags(max(len(texts), 1)))(query, texts)
