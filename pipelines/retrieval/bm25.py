"""BM25 scores of documents for a query, as bm25s computes them (Lucene's variant, k1 1.5,
b 0.75, float32 scores), from bags of words.

The statistics are per record, since BM25 defines them over the corpus being ranked (here a
record's chunks): the number of chunks, their average length and, for each query term, the
chunks holding it. They come from the cached bags (:mod:`pipelines.retrieval.terms`), and only
the query's terms are looked at, so a record costs work in its chunks, not in its words. Every
score is the float bm25s's ``BM25().get_scores`` returns (the tests compare them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pipelines.retrieval.terms import Bag, Bags, stack, tokenize

K1, B = 1.5, 0.75
"""bm25s's defaults (Lucene's k1 and b)."""


def bm25_from_bags(query: Sequence[int | None], bags: Sequence[Bag]) -> list[float]:
    """BM25 score of every bag for the query's term ids (None: a term no bag has), in bm25s's
    float32 arithmetic: idf ``ln(1 + (n - df + 0.5) / (df + 0.5))``, term part
    ``tf / (k1 (1 - b + b len / avg len) + tf)``, summed over the query's terms in order."""
    n = len(bags)
    if not query or not any(b.length for b in bags):
        return [0.0] * n
    lengths = np.array([b.length for b in bags])
    average = lengths.mean()
    wanted = [t for t in query if t is not None]
    scores = np.zeros(n, dtype=np.float32)
    if wanted:
        entries = stack(bags)
        keep = np.isin(entries.ids, wanted)
        ids, counts, owner = entries.ids[keep], entries.counts[keep], entries.owner[keep]
        for term in wanted:
            hit = ids == term
            docs = owner[hit]
            if not docs.size:
                continue
            df = docs.size
            idf = np.float32(math.log(1 + (n - df + 0.5) / (df + 0.5)))
            tf = counts[hit].astype(np.float32)
            part = tf / (K1 * ((1 - B) + B * lengths[docs] / average) + tf)
            scores[docs] += (idf * part).astype(np.float32)
    return [float(s) for s in scores]


class BM25:
    """BM25 as a retriever ``(query, texts) -> scores``, the texts' bags kept in ``bags``."""

    def __init__(self, bags: Bags | None = None):
        self.bags = bags if bags is not None else Bags()

    def __call__(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        bags = self.bags.of(texts)
        return bm25_from_bags(self.bags.ids(tokenize([query])[0]), bags)


def bm25_scores(query: str, texts: Sequence[str]) -> list[float]:
    """BM25 score of every text for ``query`` (English stop words removed); no texts give no
    scores, and a query or texts without a word left (empty, stop words only) score 0.0 each,
    where bm25s itself would raise."""
    return BM25(Bags(max(len(texts), 1)))(query, texts)
