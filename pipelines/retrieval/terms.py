"""Bags of words for the sparse retrievers: each distinct text tokenized once, by bm25s's rules.

BM25 and TF-IDF need, of every chunk, only its term counts and its length; their corpus
statistics (document frequencies, average length) are per record and cheap to gather from the
bags. A :class:`Bags` keeps the bag of each text it has seen by the text's hash (a bounded
memo), so a chunk met again in another record, level or variant is not tokenized again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipelines.retrieval.memo import Memo, text_digest

BAGS_KEPT = 32_768
"""Bags a :class:`Bags` keeps: a 256-word chunk's takes about 3.5 kB with its share of the
vocabulary (measured on the snapshot's chunks), so at most about 110 MB; a 1,300-event corpus
has some 30,000 distinct chunks."""


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """bm25s's tokens of each text: lower-cased words of two characters or more, English stop
    words removed."""
    import bm25s

    if not texts:
        return []
    return bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


@dataclass(frozen=True)
class Bag:
    """The terms of one text (ids in a :class:`Bags`' vocabulary, in order of first occurrence)
    with their counts, and its number of tokens."""

    ids: np.ndarray
    counts: np.ndarray
    length: int


@dataclass(frozen=True)
class Stacked:
    """The bags of one record's chunks end to end: ``owner`` is each entry's chunk and
    ``bounds`` the ``[start, end)`` of every chunk's entries."""

    ids: np.ndarray
    counts: np.ndarray
    owner: np.ndarray
    bounds: list[tuple[int, int]]


class Bags:
    """Bags of words of texts, one per distinct text, kept in a memo of ``kept`` by text hash;
    term ids come from one vocabulary that grows with the distinct terms seen."""

    def __init__(self, kept: int = BAGS_KEPT):
        self.vocabulary: dict[str, int] = {}
        self.memo: Memo[Bag] = Memo(kept)
        self.asked = 0
        self.tokenized = 0

    def of(self, texts: Sequence[str]) -> list[Bag]:
        """The bag of each text; texts not in the memo are tokenized in one call."""
        keys = [text_digest(t) for t in texts]
        self.asked += len(keys)
        found: dict[bytes, Bag | None] = {k: self.memo.get(k) for k in dict.fromkeys(keys)}
        missing = {k: t for k, t in zip(keys, texts, strict=True) if found[k] is None}
        self.tokenized += len(missing)
        for key, tokens in zip(missing, tokenize(list(missing.values())), strict=True):
            found[key] = self._bag(tokens)
            self.memo.put(key, found[key])
        return [found[k] for k in keys]  # type: ignore[misc]

    def _bag(self, tokens: list[str]) -> Bag:
        counts = Counter(tokens)
        vocabulary = self.vocabulary
        ids = [vocabulary.setdefault(t, len(vocabulary)) for t in counts]
        return Bag(
            np.array(ids, dtype=np.int64),
            np.fromiter(counts.values(), dtype=np.int64, count=len(counts)),
            len(tokens),
        )

    def ids(self, terms: Sequence[str]) -> list[int | None]:
        """The id of each term, None for a term no text seen so far has."""
        return [self.vocabulary.get(t) for t in terms]

    def stats(self) -> dict[str, float]:
        """Texts asked for, bags found in the memo, texts tokenized and the hit rate."""
        hits = self.asked - self.tokenized
        return {
            "asked": self.asked,
            "cache_hits": hits,
            "tokenized": self.tokenized,
            "hit_rate": round(hits / self.asked, 4) if self.asked else 0.0,
        }


def stack(bags: Sequence[Bag]) -> Stacked:
    """The bags end to end (numpy arrays), with each entry's owner and each bag's bounds."""
    sizes = [len(b.ids) for b in bags]
    ends = np.cumsum(sizes).tolist()
    bounds = list(zip([0, *ends[:-1]], ends, strict=True))
    empty = np.zeros(0, dtype=np.int64)
    return Stacked(
        np.concatenate([b.ids for b in bags]) if bags else empty,
        np.concatenate([b.counts for b in bags]) if bags else empty,
        np.repeat(np.arange(len(bags)), sizes),
        bounds,
    )
