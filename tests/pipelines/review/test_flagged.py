"""Which items ``benchsmith review --flagged`` shows: the reference panel's labels of a row, or
of a SummHay row's insights."""

from __future__ import annotations

from pipelines.review.items import _labels


def test_a_summhay_row_takes_its_hardest_insight_s_labels() -> None:
    row = {
        "topic_id": "t",
        "insights": [
            {"insight_id": "S1.1", "solvable": 1.0, "closed_book": None, "difficulty": "easy"},
            {"insight_id": "S1.2", "solvable": 0.5, "closed_book": None, "difficulty": "hard"},
            {"insight_id": "S1.3", "solvable": None, "closed_book": None, "difficulty": None},
        ],
    }
    assert _labels(row) == {"solvable": 0.5, "difficulty": "hard"}
    assert _labels({"qa_id": "q", "solvable": 1.0, "closed_book": 0.0, "difficulty": "easy"}) == {
        "solvable": 1.0,
        "closed_book": 0.0,
        "difficulty": "easy",
    }
    assert _labels({"topic_id": "t", "insights": []}) == {}
