"""BM25 scores of documents for a query, with bm25s (Lucene's variant, k1 1.5, b 0.75)."""

from __future__ import annotations

from collections.abc import Sequence


def bm25_scores(query: str, texts: Sequence[str]) -> list[float]:
    """BM25 score of every text for ``query`` (English stop words removed); no texts give no
    scores, and a query or texts without a word left (empty, stop words only) score 0.0 each,
    where bm25s itself would raise."""
    if not texts:
        return []
    import bm25s

    corpus = bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)
    terms = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
    if not terms or not any(corpus):
        return [0.0] * len(texts)
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    return [float(s) for s in index.get_scores(terms)]
