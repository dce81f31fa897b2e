"""Retrieval for the RAG setting: scorers, the token budget, and the coverage bound."""

from __future__ import annotations

import json
import random

from benchsmith_scoring.summhay import parse_summary
from builders.ranking import fill_context, keyword_scores, random_scores
from builders.summhay import eval_responders
from builders.summhay.retrieval import bounds_by_retriever, coverage_bound, oracle_scores
from tests.builders.summhay.test_layouts import haystack


def test_keywords_count_shared_content_words_only() -> None:
    scores = keyword_scores(
        "What do they say about the budget for the trip?",
        ["The budget grew.", "The trip and its budget", "Nothing here"],
    )
    assert scores == [1.0, 2.0, 0.0]


def test_oracle_counts_the_subtopic_insights_each_document_carries() -> None:
    assert oracle_scores(haystack(), "S2") == [1.0, 1.0, 1.0, 0.0, 1.0]


def test_random_is_seeded() -> None:
    assert random_scores(4, random.Random(3)) == random_scores(4, random.Random(3))


def test_context_takes_best_documents_that_fit_the_budget() -> None:
    ids = ["a", "b", "c", "d"]
    # c (score 9) fits, a (5) would overflow after c, b (3) fits, d (1) does not
    assert fill_context(ids, [5, 3, 9, 1], tokens=[80, 30, 60, 20], budget=100) == ["c", "b"]
    assert fill_context(ids, [1, 1, 1, 1], tokens=[10, 10, 10, 10], budget=25) == ["a", "b"]


def test_bound_counts_insights_with_a_gold_document_in_context() -> None:
    h = haystack()
    assert coverage_bound(h, "S2", {"D2"}) == (1, 2)  # S2.1 via D2; S2.2 lives in D3 and D5
    assert coverage_bound(h, "S2", {"D1", "D3"}) == (2, 2)
    rows = [
        {"retriever": "x", "reachable": 1, "insights": 2},
        {"retriever": "x", "reachable": 2, "insights": 2},
        {"retriever": "y", "reachable": 0, "insights": 3},
    ]
    assert bounds_by_retriever(rows) == {"x": 75.0, "y": 0.0}


def test_extractive_summary_cites_every_document_with_the_sentence() -> None:
    # documents by haystack number, in retrieval order (SummHay labels them so)
    docs = [
        {"number": 7, "text": "Ana: The shared budget is 300 euros for the whole trip. We agree."},
        {"number": 2, "text": "The shared budget is 300 euros for the whole trip.[12]"},
        {"number": 5, "text": "Bo likes trains and slow mornings by the sea."},
    ]
    text = eval_responders.summarize(
        {"query": "What about the shared budget?", "bullets": 3, "documents": docs}
    )
    # one line, cited as SummHay's parser reads it; the web reference [12] is not carried over
    assert text == "- The shared budget is 300 euros for the whole trip. [7][2]"
    (bullet,) = parse_summary(text)
    assert (
        bullet.text == "The shared budget is 300 euros for the whole trip."
        and bullet.citations == (7, 2)
        and bullet.unread == 0
    )


def test_lexical_judge_grades_full_partial_and_none() -> None:
    insight = "Ana says the budget plan needs 300 euros before 4 June."
    bullets = [
        {"bullet_id": 1, "text": "Bo wants trains."},
        {"bullet_id": 2, "text": "The budget needs 300 euros."},
        {"bullet_id": 3, "text": "Ana says the budget needs 300 euros before 4 June."},
    ]
    assert json.loads(eval_responders.judge({"insight": insight, "bullets": bullets})) == {
        "coverage": "full",
        "bullet_id": 3,
    }
    assert json.loads(eval_responders.judge({"insight": insight, "bullets": bullets[:2]})) == {
        "coverage": "partial",
        "bullet_id": 2,
    }
    assert (
        json.loads(eval_responders.judge({"insight": insight, "bullets": bullets[:1]}))["coverage"]
        == "none"
    )
