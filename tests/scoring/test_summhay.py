"""SummHay scoring on hand-worked cases: each expected value is worked out here from SummHay's
released code (salesforce/summary-of-a-haystack: ``populate_summaries.bullet_processor``,
``populate_eval.evaluate_insights``, ``utils_eval.extract_citations``,
``build_ref_insight2docids``, ``compute_single_sample_scores``, ``compute_full_results``), not by
running it. docs/metrics.md lists the cases."""

from __future__ import annotations

import pytest

from benchsmith_scoring.summhay import (
    Verdict,
    cited_numbers,
    parse_summary,
    score_insights,
    split_lines,
    summarize_scores,
    unread_brackets,
)
from builders.summhay.answers import JudgeAnswer, known_coverage

# haystack order; a citation [n] names the n-th document, whatever its id
DOCS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


@pytest.mark.parametrize(
    ("line", "numbers"),
    [
        ("Rain fell [1].", [1]),
        ("Two [1, 4] and [3][7]", [1, 4, 3, 7]),
        ("Spaced [ 12 ] and empty parts [1,,2]", [12, 1, 2]),
        ("Zero-padded [03]", [3]),
        ("Nested [[9]]", [9]),
        ("Repeated [2][2]", [2, 2]),
        # not read: letters, ranges, nothing inside
        ("Our old form [D03, D17] and [Doc 5] and [Document 6]", []),
        ("A range [3-5], a year [2023 report], empty [ ]", []),
        # their int('1 2') raises ValueError; ours skips the part
        ("Space-separated [1 2]", []),
    ],
)
def test_citations_are_read_as_summhays_parser_reads_them(line: str, numbers: list[int]) -> None:
    assert cited_numbers(line) == numbers


def test_brackets_with_digits_that_cite_nothing_are_counted() -> None:
    assert unread_brackets("Costs rose [D03, D17] and [Doc 5] [1 2] [3-5]") == 4
    assert unread_brackets("Fine [3][7] and [1, 4], no digits [sic]") == 0


def test_every_non_empty_line_is_a_bullet_headers_included() -> None:
    summary = """## Stress management

**Key points:**
  - Ayla sleeps 8 hours before exams [1][3].
* Bram walks 5 km daily [2, 5]
1. Chidi meditates [Doc 4]
"""
    # bullet_processor: split on \n, strip, drop empty lines -> 5 bullets, numbered 1..5
    assert split_lines(summary) == [
        "## Stress management",
        "**Key points:**",
        "- Ayla sleeps 8 hours before exams [1][3].",
        "* Bram walks 5 km daily [2, 5]",
        "1. Chidi meditates [Doc 4]",
    ]
    bullets = parse_summary(summary)
    assert [(b.bullet_id, b.citations, b.unread) for b in bullets] == [
        (1, (), 0),
        (2, (), 0),
        (3, (1, 3), 0),
        (4, (2, 5), 0),
        (5, (), 1),
    ]
    # the judge is shown the text without list marker and citations
    assert [b.text for b in bullets][2:] == [
        "Ayla sleeps 8 hours before exams .",
        "Bram walks 5 km daily",
        "Chidi meditates [Doc 4]",
    ]
    assert bullets[2].line == "- Ayla sleeps 8 hours before exams [1][3]."


def test_lines_split_on_newline_only() -> None:
    # str.split("\n") then strip: \r\n endings leave no empty bullet
    assert split_lines("- a [1]\r\n\r\n- b [2]\r\n") == ["- a [1]", "- b [2]"]


SUMMARY_1 = "## Budget\n- a [1][2]\n- b [3]\n- c\n"
GOLD_1 = {"i1": {"alpha", "bravo", "delta"}, "i2": {"charlie"}, "i3": {"echo"}, "i4": {"foxtrot"}}
VERDICTS_1 = [
    Verdict("i1", "full", 2),  # cites {1, 2}, gold {1, 2, 4}: P = 1, R = 2/3, F1 = 0.8
    Verdict("i2", "partial", 3),  # cites {3}, gold {3}: F1 = 1
    Verdict("i3", "full", 4),  # cites nothing: F1 = 0
    Verdict("i4", "none", None),
]
SUMMARY_2 = "- d [7, 8]\n"
GOLD_2 = {"i5": {"golf"}, "i6": {"hotel", "alpha"}}
VERDICTS_2 = [
    Verdict("i5", "full", 1),  # cites {7, 8}, gold {7}: P = 1/2, R = 1, F1 = 2/3
    Verdict("i6", "none", None),
]


def test_one_summary_scores_as_compute_single_sample_scores() -> None:
    scores = score_insights(VERDICTS_1, parse_summary(SUMMARY_1), GOLD_1, DOCS)
    assert [round(s.f1, 6) for s in scores] == [0.8, 1.0, 0.0, 0.0]
    summary = summarize_scores(scores)
    # Coverage = (1 + 0.5 + 1 + 0) / 4; Citation = (0.8 + 1 + 0) / 3 (covered only);
    # Joint = (1 * 0.8 + 0.5 * 1 + 1 * 0 + 0) / 4
    assert summary["coverage"] == pytest.approx(62.5)
    assert summary["citation"] == pytest.approx(60.0)
    assert summary["joint"] == pytest.approx(32.5)
    assert summary["citation_precision"] == pytest.approx(100 * (1 + 1 + 0) / 3)
    assert summary["citation_recall"] == pytest.approx(100 * (2 / 3 + 1 + 0) / 3)
    assert summary["covered"] == 3 and summary["citation_problems"] == 0


def test_a_system_pools_every_insight_as_compute_full_results() -> None:
    first = score_insights(VERDICTS_1, parse_summary(SUMMARY_1), GOLD_1, DOCS)
    second = score_insights(VERDICTS_2, parse_summary(SUMMARY_2), GOLD_2, DOCS)
    assert summarize_scores(second)["citation"] == pytest.approx(100 * 2 / 3)
    pooled = summarize_scores(first + second)
    # six insights: coverage (1 + .5 + 1 + 0 + 1 + 0) / 6; four covered: citation
    # (.8 + 1 + 0 + 2/3) / 4; joint (.8 + .5 + 0 + 0 + 2/3 + 0) / 6
    assert pooled["coverage"] == pytest.approx(100 * 3.5 / 6)
    assert pooled["citation"] == pytest.approx(100 * (0.8 + 1 + 2 / 3) / 4)  # 61.67
    assert pooled["joint"] == pytest.approx(100 * (0.8 + 0.5 + 2 / 3) / 6)
    assert pooled["citation_precision"] == pytest.approx(100 * (1 + 1 + 0 + 0.5) / 4)
    assert pooled["citation_recall"] == pytest.approx(100 * (2 / 3 + 1 + 0 + 1) / 4)
    # the mean of the two summaries' Citation, (60 + 66.67) / 2 = 63.33, is another number
    assert pooled["citation"] != pytest.approx((60.0 + 100 * 2 / 3) / 2)


def test_a_citation_past_the_haystack_counts_against_precision() -> None:
    bullets = parse_summary("- x [2][99]")
    (score,) = score_insights([Verdict("i", "full", 1)], bullets, {"i": {"bravo"}}, DOCS)
    # gen {2, 99}, gold {2}: P = 1/2, R = 1, F1 = 2/3
    assert (score.precision, score.recall) == (0.5, 1.0)
    assert score.f1 == pytest.approx(2 / 3)


def test_our_old_citation_form_scores_no_citation() -> None:
    bullets = parse_summary("- x [D02]")
    (score,) = score_insights([Verdict("i", "full", 1)], bullets, {"i": {"bravo"}}, DOCS)
    assert (score.coverage, score.f1) == (1.0, 0.0)
    assert bullets[0].unread == 1


THREE = parse_summary("- a [1]\n- b [2]\n- c [3]")
ODD_VERDICTS = [
    Verdict("i1", "full", None),  # judge said NA: int('NA') fails, index -1
    Verdict("i2", "partial", 0),  # index 0
    Verdict("i3", "full", 7),  # past the end
]
ODD_GOLD = {"i1": {"bravo"}, "i2": {"charlie"}, "i3": {"alpha"}}


def test_paper_mode_scores_no_citation_without_a_valid_bullet() -> None:
    scores = score_insights(ODD_VERDICTS, THREE, ODD_GOLD, DOCS, mode="paper")
    assert [(s.coverage, s.f1) for s in scores] == [(1.0, 0.0), (0.5, 0.0), (1.0, 0.0)]
    assert [s.problem for s in scores] == [
        "covered, but no bullet named",
        "covered, but bullet 0 does not exist",
        "covered, but bullet 7 does not exist",
    ]
    assert summarize_scores(scores)["citation_problems"] == 3


def test_reference_code_mode_reads_the_bullet_their_code_reads() -> None:
    scores = score_insights(ODD_VERDICTS, THREE, ODD_GOLD, DOCS, mode="reference_code")
    # NA: bullets[-1 - 1] = bullets[-2], "- b [2]", gold {2}: F1 1
    # 0: bullets[0 - 1] = bullets[-1], "- c [3]", gold {3}: F1 1
    # 7: bullets[6] raises IndexError there; 0 here, with the problem recorded
    assert [(s.coverage, s.f1) for s in scores] == [(1.0, 1.0), (0.5, 1.0), (1.0, 0.0)]
    assert scores[0].problem == "covered, but no bullet named: SummHay's code reads bullets[-2]"
    assert scores[2].problem.endswith("SummHay's code raises IndexError")
    # a one-bullet summary: bullets[-2] does not exist there either
    (alone,) = score_insights(
        [Verdict("i1", "full", None)], THREE[:1], ODD_GOLD, DOCS, mode="reference_code"
    )
    assert alone.f1 == 0.0 and alone.problem.endswith("raises IndexError")


def test_nothing_covered_leaves_citation_undefined() -> None:
    scores = score_insights([Verdict("i4", "none", None)], THREE, GOLD_1, DOCS)
    summary = summarize_scores(scores)
    assert summary["coverage"] == 0.0 and summary["joint"] == 0.0
    assert summary["citation"] is None  # SummHay's np.mean([]) is NaN


def test_retrievable_recall_counts_only_documents_in_the_context() -> None:
    bullets = parse_summary("- a [1]")
    gold = {"i1": {"alpha", "bravo", "charlie", "delta"}}
    (score,) = score_insights(
        [Verdict("i1", "full", 1)], bullets, gold, DOCS, context_ids={"alpha", "bravo", "hotel"}
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
