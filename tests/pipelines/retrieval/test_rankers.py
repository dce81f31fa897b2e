"""Retrievers by name, and TF-IDF against a hand-computed case."""

from __future__ import annotations

import math

import pytest

from pipelines.retrieval.rankers import rankers, top
from pipelines.retrieval.tfidf import tfidf_scores


def test_tfidf_weights_rare_terms_and_matches_the_formula() -> None:
    texts = ["levee breach flood", "flood warning flood", "harbour crane"]
    scores = tfidf_scores("levee flood", texts)
    # idf = ln((1 + 3) / (1 + df)) + 1; levee in 1 text, flood in 2
    levee, flood = math.log(4 / 2) + 1, math.log(4 / 3) + 1
    breach = levee
    query = math.hypot(levee, flood)
    first = (levee * levee + flood * flood) / (query * math.sqrt(levee**2 + breach**2 + flood**2))
    assert scores[0] == pytest.approx(first)
    assert scores[0] > scores[1] > scores[2] == 0.0
    assert tfidf_scores("anything", []) == []


def test_rankers_are_built_by_name_and_random_is_seeded() -> None:
    built = rankers(["random", "tfidf", "bm25"], seed=7, dense_model=None)
    texts = ["a storm hit the coast", "the council met", "storm damage on the coast"]
    assert set(top(built["bm25"]("storm coast", texts), 2)) == {0, 2}
    again = rankers(["random"], seed=7, dense_model=None)["random"]
    assert built["random"]("q", texts) == again("q", texts)
    assert top([0.5, 0.9, 0.5]) == [1, 0, 2]  # ties keep input order
    with pytest.raises(ValueError, match="unknown retriever 'nope'"):
        rankers(["nope"], seed=1, dense_model=None)


@pytest.mark.parametrize("name", ["random", "keywords", "tfidf", "bm25"])
def test_a_ranker_over_nothing_to_rank_returns_no_hits_and_never_raises(name: str) -> None:
    rank = rankers([name], seed=7, dense_model=None)[name]
    assert rank("storm coast", []) == []
    # texts without a word left (empty, stop words only) and a query without one score alike
    for query, texts in (
        ("storm coast", ["", "the of and"]),
        ("", ["a storm hit"]),
        ("the", ["x"]),
    ):
        scores = rank(query, texts)
        assert len(scores) == len(texts) and all(isinstance(s, float) for s in scores)
        if name != "random":
            assert scores == [0.0] * len(texts)
    # beside real texts, an empty one ranks last
    texts = ["a storm hit the coast", "", "storm damage on the coast"]
    if name != "random":
        assert top(rank("storm coast", texts))[-1] == 1
