"""L-Eval's task scores (0-100) on hand-worked sets, as ``Evaluation/auto_eval.py`` computes them
(``reference_code``) and as its README describes them (``readme``)."""

from __future__ import annotations

import pytest

from benchsmith_scoring.leval.scores import exam_score, f1_score, percent, rouge_scores, task_score


def test_coursera_partial_credit() -> None:
    predictions = ["AC", "B", "A, C and D", ""]
    references = ["ACD", "B", "ACD", "B"]
    # reduced: AC/ACD 0.25, B/B 1, AC/ACD 0.25 (D ends the text), None/B 0 -> 1.5 / 4
    assert exam_score("coursera", predictions, references) == 37.5
    assert exam_score("coursera", predictions, references, "readme") == 37.5


def test_quality_reduces_both_sides_to_a_letter() -> None:
    predictions = ["Answer: C", "(B) Carbon"]
    references = ["(C) Oxygen", "(B) Carbon dioxide"]
    # "Answer: C" -> "A" (its first capital A-D) vs "C": 0; "B" vs "B": 1
    assert exam_score("quality", predictions, references) == 50.0


def test_gsm_compares_the_numbers() -> None:
    predictions = ["So 3 bolts in total. The answer is 3.0.", "I think 18 eggs"]
    references = ["3", "19"]
    # "3" vs "3": 1; "18" vs "19": 0
    assert exam_score("gsm100", predictions, references) == 50.0


def test_code_u_contains_the_reference() -> None:
    # "[1 2]" (spaces dropped: "[12]") occurs in " [1 2] done"
    assert exam_score("codeU", ["the final output is [1, 2] done"], ["[1, 2]"]) == 100.0
    # README: the reduced texts differ
    assert exam_score("codeU", ["the final output is [1, 2] done"], ["[1, 2]"], "readme") == 0.0


def test_topic_retrieval_is_the_mean_of_three_positions() -> None:
    topics = ["Art", "Space", "Music", "Food"]
    predictions = ["Sports", "Space", "Music", "Food"]  # item 0 wrong
    # code: positions 0 (items 0, 3) 50, 1 (item 1) 100, 2 (item 2) 100 -> 250 / 3
    assert exam_score("topic_retrieval_longchat", predictions, topics) == 250 / 3
    # README: every question 100 / 4 -> 75
    assert exam_score("topic_retrieval_longchat", predictions, topics, "readme") == 75.0


def test_sci_fi_is_the_mean_of_loyalty_and_fact() -> None:
    predictions = ["True [fact: False]", "false [fact: maybe]"]
    references = ["True [fact: False]", "True [fact: False]"]
    # loyalty: true/true 1, false/true 0 -> 50; fact: false/false 1, <error>/false 0 -> 50
    assert exam_score("sci_fi", predictions, references) == 50.0


def test_f1_score() -> None:
    # 2/3 and 0 -> 100 * (2/3) / 2, rounded to 4 decimals
    assert f1_score(["The cat sat on the mat.", "dog"], ["A cat sat", "cat"]) == 33.3333


def test_rouge_set_score_is_the_geometric_mean_of_the_averages() -> None:
    predictions = ["the cat sat", "cats dogs"]
    references = ["the cat sat", "dogs cats"]
    # per item (rouge1, rouge2, rougeL): (100, 100, 100) and (100, 0, 50)
    # averages 100, 50, 75; geometric mean (100 * 50 * 75) ** (1/3) = 375000 ** (1/3) ~ 72.1125
    # (the mean of per-item geometric means would be (100 + 0) / 2 = 50)
    scores = rouge_scores(predictions, references)
    assert scores == {
        "rouge1": 100.0,
        "rouge2": 50.0,
        "rougeL": 75.0,
        "geometric_mean": round(375000 ** (1 / 3), 4),
    }
    assert scores["geometric_mean"] == pytest.approx(72.1125, abs=1e-4)
    assert task_score("news_summ", "rouge", predictions, references) == scores["geometric_mean"]
    # README: the leaderboard's ROUGE is ROUGE-L
    assert task_score("news_summ", "rouge", predictions, references, "readme") == 75.0


def test_task_score_dispatches_on_the_evaluation() -> None:
    assert task_score("gsm100", "exam", ["The answer is 4"], ["4"]) == 100.0
    assert task_score("narrative_qa", "f1", ["a cat"], ["the cat"]) == 100.0
    with pytest.raises(ValueError, match="evaluation"):
        task_score("x", "bleu", ["a"], ["a"])  # type: ignore[arg-type]


def test_percent_needs_matching_non_empty_lists() -> None:
    with pytest.raises(ValueError, match="predictions"):
        percent(lambda p, r: 1.0, ["a"], [])
    with pytest.raises(ValueError, match="no items"):
        percent(lambda p, r: 1.0, [], [])
