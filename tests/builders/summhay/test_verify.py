"""Verification rules: near-duplicates, classification, and the two-way inclusion check."""

from __future__ import annotations

from builders.summhay.records import Insight
from builders.summhay.verify import check_inclusion, misclassified, near_duplicates


def test_inclusion_flags_missing_and_unplanned_insights() -> None:
    result = check_inclusion(
        planned=["S1.1", "S1.2"], present=["S1.2", "S2.3"], known=["S1.1", "S1.2", "S2.3"]
    )
    assert result.missing == ("S1.1",) and result.unplanned == ("S2.3",)
    assert not result.ok
    assert result.reason() == "missing planned insights S1.1; carries unplanned insights S2.3"


def test_inclusion_ignores_ids_the_checker_made_up() -> None:
    result = check_inclusion(
        planned=["S1.1"], present=["S1.1", "S9.9", "banana"], known=["S1.1", "S1.2"]
    )
    assert result.ok and result.reason() == ""


def test_near_duplicates_keep_the_first_and_name_it() -> None:
    insights = [
        Insight("S1.1", "S1", "The council approved 4,200 euros for new flood barriers on 3 May."),
        Insight(
            "S1.2", "S1", "The council approved 4,200 euros for the new flood barriers on 3 May."
        ),
        Insight("S2.1", "S2", "Forty volunteers cleared the river bank near Brask on Sunday."),
        Insight("S2.2", "S2", "the council approved 4,200 euros for new flood barriers on 3 may."),
    ]
    kept, dropped = near_duplicates(insights, threshold=0.7)
    assert [i.insight_id for i in kept] == ["S1.1", "S2.1"]
    assert dropped == {"S1.2": "S1.1", "S2.2": "S1.1"}


def test_misclassified_insights_get_a_reason() -> None:
    insights = [Insight("S1.1", "S1", "a"), Insight("S1.2", "S1", "b"), Insight("S2.1", "S2", "c")]
    wrong = misclassified(insights, {"S1.1": "S1", "S1.2": "S2"})
    assert wrong == {
        "S1.2": "written for S1, classified as S2",
        "S2.1": "the classifier gave no subtopic",
    }


def test_near_duplicates_by_vector_cosine() -> None:
    insights = [Insight("S1.1", "S1", "a"), Insight("S1.2", "S1", "b"), Insight("S2.1", "S2", "c")]
    vectors = [[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]]  # cos(1, 2) = 0.96, cos(1, 3) = 0
    kept, dropped = near_duplicates(insights, 0.9, vectors)
    assert [i.insight_id for i in kept] == ["S1.1", "S2.1"] and dropped == {"S1.2": "S1.1"}
