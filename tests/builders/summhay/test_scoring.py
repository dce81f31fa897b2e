"""SummHay scoring on hand-built cases whose answers are worked out here."""

from __future__ import annotations

import pytest

from builders.summhay.answers import JudgeAnswer, known_coverage
from builders.summhay.scoring import (
    Bullet,
    Verdict,
    citations_in,
    parse_summary,
    resolve_citations,
    score_insights,
    summarize_scores,
)

DOCS = ["D01", "D02", "D03", "D04", "D05", "D06", "D07", "D08"]


def test_citation_forms_are_all_read() -> None:
    assert citations_in("Rain fell [1].") == (["1"], "Rain fell .")
    assert citations_in("Two [1, 4] and [3][7] and [Doc 5] and [Document 6]")[0] == [
        "1",
        "4",
        "3",
        "7",
        "5",
        "6",
    ]
    assert citations_in("Costs rose [D03; D05]")[0] == ["D03", "D05"]
    # brackets that are not citations stay in the text
    assert citations_in("The [sic] quote and [see above]") == (
        [],
        "The [sic] quote and [see above]",
    )


def test_summary_bullets_skip_headers() -> None:
    summary = """## Stress management
**Key points:**
- Ayla sleeps 8 hours before exams [1][3].
* Bram walks 5 km daily [Doc 2]
1. Chidi meditates [4, 6]
"""
    bullets = parse_summary(summary)
    assert bullets == [
        Bullet(1, "Ayla sleeps 8 hours before exams .", ("1", "3")),
        Bullet(2, "Bram walks 5 km daily", ("2",)),
        Bullet(3, "Chidi meditates", ("4", "6")),
    ]


def test_lines_without_markers_are_bullets_except_headers() -> None:
    bullets = parse_summary("Summary:\nFirst point [2]\n\nSecond point [3]\n")
    assert [(b.bullet_id, b.citations) for b in bullets] == [(1, ("2",)), (2, ("3",))]


def test_citations_resolve_by_id_or_number() -> None:
    assert resolve_citations(["3", "D05", "doc7", "99", "x"], DOCS) == {"D03", "D05", "D07"}


def test_scores_match_the_paper_formulas() -> None:
    bullets = [Bullet(1, "a", ("1", "2")), Bullet(2, "b", ("3",)), Bullet(3, "c", ())]
    gold = {"i1": {"D01", "D02", "D04"}, "i2": {"D03"}, "i3": {"D05"}, "i4": {"D06"}}
    verdicts = [
        Verdict("i1", "full", 1),  # P = 2/2, R = 2/3, F1 = 0.8
        Verdict("i2", "partial", 2),  # P = 1, R = 1, F1 = 1
        Verdict("i3", "full", 3),  # no citations: F1 = 0
        Verdict("i4", "none", None),
    ]
    scores = score_insights(verdicts, bullets, gold, DOCS)
    assert [round(s.f1, 6) for s in scores] == [0.8, 1.0, 0.0, 0.0]
    summary = summarize_scores(scores)
    # Coverage = (1 + 0.5 + 1 + 0) / 4; Citation = (0.8 + 1 + 0) / 3; Joint = (0.8 + 0.5 + 0 + 0) / 4
    assert summary["coverage"] == pytest.approx(62.5)
    assert summary["citation"] == pytest.approx(60.0)
    assert summary["joint"] == pytest.approx(32.5)
    assert summary["citation_precision"] == pytest.approx(100 * (1 + 1 + 0) / 3)
    assert summary["citation_recall"] == pytest.approx(100 * (2 / 3 + 1 + 0) / 3)
    assert summary["covered"] == 3 and summary["citation_problems"] == 0


def test_na_or_missing_bullet_keeps_coverage_but_scores_no_citation() -> None:
    bullets = [Bullet(1, "a", ("1",))]
    gold = {"i1": {"D01"}, "i2": {"D01"}}
    scores = score_insights(
        [Verdict("i1", "full", None), Verdict("i2", "partial", 7)], bullets, gold, DOCS
    )
    assert [(s.coverage, s.f1) for s in scores] == [(1.0, 0.0), (0.5, 0.0)]
    assert scores[0].problem == "covered, but no bullet named"
    assert scores[1].problem == "covered by bullet 7, which does not exist"
    assert summarize_scores(scores)["citation_problems"] == 2


def test_retrievable_recall_counts_only_documents_in_the_context() -> None:
    bullets = [Bullet(1, "a", ("1",))]
    gold = {"i1": {"D01", "D02", "D03", "D04"}}
    (score,) = score_insights(
        [Verdict("i1", "full", 1)], bullets, gold, DOCS, context_ids={"D01", "D02", "D08"}
    )
    assert score.recall == pytest.approx(0.25)  # 1 of 4 gold documents
    assert score.retrievable_recall == pytest.approx(0.5)  # 1 of the 2 that were in the context


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"coverage": "FULL", "bullet_id": "3"}, ("full", 3)),
        ({"coverage": "Partially covered", "bullet_id": 2}, ("partial", 2)),
        ({"coverage": "NO", "bullet_id": "NA"}, ("none", None)),
        ({"coverage": "full", "bullet_id": "bullet 4"}, ("full", 4)),
        ({"coverage": "full"}, ("full", None)),
    ],
)
def test_judge_answers_are_normalised(raw: dict, expected: tuple) -> None:
    answer = JudgeAnswer.model_validate(raw)
    assert known_coverage(answer) is None
    assert answer.normalized() == expected


def test_unknown_coverage_is_refused_with_a_reason() -> None:
    assert "unknown coverage 'maybe'" in known_coverage(JudgeAnswer(coverage="maybe"))
