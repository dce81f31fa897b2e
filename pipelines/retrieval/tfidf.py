"""TF-IDF scores of documents for a query: cosine of smoothed TF-IDF vectors.

WikiGenBench compares TF-IDF with BM25 and dense rerankers. Tokens are bm25s's (lower-cased,
English stop words removed), so the two sparse retrievers see the same words.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


def tfidf_scores(query: str, texts: Sequence[str]) -> list[float]:
    """Cosine of ``query`` and each text under TF-IDF weights (idf ``ln((1+n)/(1+df)) + 1``)."""
    import bm25s

    if not texts:
        return []
    tokens = bm25s.tokenize([query, *texts], stopwords="en", return_ids=False, show_progress=False)
    counts = [Counter(t) for t in tokens]
    df = Counter(term for c in counts[1:] for term in c)
    n = len(texts)

    def vector(c: Counter[str]) -> dict[str, float]:
        weights = {t: k * (math.log((1 + n) / (1 + df[t])) + 1) for t, k in c.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {t: w / norm for t, w in weights.items()}

    q = vector(counts[0])
    return [sum((w * q.get(t, 0.0) for t, w in vector(c).items()), 0.0) for c in counts[1:]]
