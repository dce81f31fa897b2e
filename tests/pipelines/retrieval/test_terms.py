"""BM25 and TF-IDF from cached bags of words give the very floats of the per-record
computation (bm25s's index, the TF-IDF formula over dictionaries), and each distinct text is
tokenized once."""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import bm25s
import pytest

from pipelines.retrieval.bm25 import BM25, bm25_scores
from pipelines.retrieval.memo import Memo, text_digest
from pipelines.retrieval.terms import Bags
from pipelines.retrieval.tfidf import TFIDF, tfidf_scores

ROOT = Path(__file__).resolve().parents[3]
WORDS = ["storm", "levee", "flood", "the", "a", "of", "and", "coast", "harbour", "crane",
         "council", "river", "bank", "Bank", "x", "zz", "12", "3", "über", "naïve", "it's"]  # fmt: skip


def bm25s_scores(query: str, texts: Sequence[str]) -> list[float]:
    """A bm25s index of ``texts`` asked for ``query``: what the stage computed per record."""
    if not texts:
        return []
    corpus = bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)
    terms = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
    if not terms or not any(corpus):
        return [0.0] * len(texts)
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    return [float(s) for s in index.get_scores(terms)]


def formula_tfidf(query: str, texts: Sequence[str]) -> list[float]:
    """Cosine of smoothed TF-IDF vectors as dictionaries: what the stage computed per record."""
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


def corpora(seed: int, n: int) -> list[tuple[str, list[str]]]:
    """Random queries and texts: repeated and absent terms, stop words only, empty texts."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        texts = [
            " ".join(rng.choices(WORDS, k=rng.randint(0, 40))) for _ in range(rng.randint(0, 9))
        ]
        out.append((" ".join(rng.choices(WORDS, k=rng.randint(0, 6))), texts))
    return out


def snapshot_chunks() -> list[str]:
    """256-word chunks of the snapshot wiki's text."""
    words = re.sub(r"<[^>]+>", " ", (ROOT / "snapshot/wiki/export.xml").read_text()).split()
    return [" ".join(words[i : i + 256]) for i in range(0, min(len(words), 60_000), 256)]


@pytest.mark.parametrize(
    ("cached", "reference"), [(BM25, bm25s_scores), (TFIDF, formula_tfidf)], ids=["bm25", "tfidf"]
)
def test_scores_from_bags_are_the_per_record_floats(cached: type, reference: object) -> None:
    rank = cached(Bags(kept=16))  # a small memo: texts come back, some after they were dropped
    one_shot = bm25_scores if cached is BM25 else tfidf_scores
    for query, texts in corpora(30, 250):
        expected = reference(query, texts)  # type: ignore[operator]
        assert rank(query, texts) == expected, (query, texts)
        assert one_shot(query, texts) == expected
    chunks = snapshot_chunks()
    rng = random.Random(1)
    for _ in range(8):
        texts = rng.sample(chunks, 40)
        query = " ".join(rng.sample(" ".join(texts).split(), 8))
        assert rank(query, texts) == reference(query, texts)  # type: ignore[operator]


def test_each_distinct_text_is_tokenized_once_and_hits_are_counted() -> None:
    bags = Bags(kept=3)
    first = bags.of(["storm coast", "the council met", "storm coast"])
    assert first[0] is first[2]  # the same text, one bag
    assert bags.stats() == {"asked": 3, "cache_hits": 1, "tokenized": 2, "hit_rate": 0.3333}
    again = bags.of(["the council met", "harbour crane"])
    assert again[0] is first[1] and bags.tokenized == 3
    assert list(bags.vocabulary) == ["storm", "coast", "council", "met", "harbour", "crane"]
    assert (again[1].length, again[1].counts.tolist()) == (2, [1, 1])
    bags.of(["a levee", "a flood"])  # past 3 kept: "storm coast" goes
    bags.of(["storm coast"])
    assert bags.stats() == {"asked": 8, "cache_hits": 2, "tokenized": 6, "hit_rate": 0.25}


def test_the_memo_drops_the_least_recently_used() -> None:
    memo: Memo[int] = Memo(2)
    a, b, c = (text_digest(t) for t in "abc")
    memo.put(a, 1)
    memo.put(b, 2)
    assert memo.get(a) == 1  # now b is the least recently used
    memo.put(c, 3)
    assert (memo.get(a), memo.get(b), memo.get(c), len(memo)) == (1, None, 3, 2)
    with pytest.raises(ValueError, match="at least one"):
        Memo(0)
