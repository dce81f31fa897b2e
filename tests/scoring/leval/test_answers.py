"""L-Eval's per-task answer reduction on hand-worked cases, each worked out from the
``process_*`` functions of L-Eval's ``Evaluation/auto_eval.py``."""

from __future__ import annotations

import pytest

from benchsmith_scoring.leval.answers import (
    code_prediction,
    code_reference,
    is_option_task,
    judge_prediction,
    judge_reference,
    math_answer,
    option_prediction,
    option_reference,
)


def test_option_tasks() -> None:
    assert is_option_task("coursera") and is_option_task("quality") and is_option_task("tpo")
    assert not is_option_task("gsm100") and not is_option_task("sci_fi")


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("(A) Element of surprise", "A"),  # the first word, A-D only
        ("ACD", "ACD"),
        ("B. Gravity", "B"),
        ("Element", "A"),  # no A-D in the first word: L-Eval's guess, "A"
    ],
)
def test_option_reference(reference: str, expected: str) -> None:
    assert option_reference(reference) == expected


def test_option_reference_must_not_be_empty() -> None:
    with pytest.raises(ValueError, match="empty"):
        option_reference("  ")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("C", "C"),
        ("The answer is (B)", "B"),  # the first capital A-D anywhere
        ("(A) Element of surprise", "A"),
        ("Answer: C", "A"),  # the capital A of "Answer" comes first
        ("none of them", "A"),  # no A-D at all: the guess "A"
        ("   ", "None"),
    ],
)
def test_option_prediction_single(response: str, expected: str) -> None:
    assert option_prediction(response, multiple=False) == expected


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("BC", "BC"),  # a run of "ABCD" is kept as it is
        ("DBA", "ABD"),  # a leading run of letters, sorted
        ("A, C and D", "AC"),  # "A", then capitals before a space, "." or ")": C; D ends it
        ("A, C and D.", "ACD"),
        ("(A) Element of surprise", "A"),  # A before ")"; E is followed by a letter
        ("I pick B and D. Question 2: C", "BD"),  # I is not A-D; nothing after "Question"
        ("xxDBy", "DB"),  # no capital stands alone: the first run of A-D, unsorted
        ("", "None"),
    ],
)
def test_option_prediction_coursera(response: str, expected: str) -> None:
    assert option_prediction(response, multiple=True) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("She pays $1,200.50 in total.\nThe answer is 1,200.50.", "1200"),  # digits up to "."
        ("3.0", "3"),
        ("18", "18"),
        ("He has 5 apples and 7 pears\n\nThen 9", "7"),  # last word with a digit, 1st paragraph
        ("no digits here", ""),
    ],
)
def test_math_answer(text: str, expected: str) -> None:
    assert math_answer(text) == expected


def test_code_reference() -> None:
    # commas, quotes and ".0" dropped
    assert code_reference("[1, 2.0, 'a']") == "[1 2 a]"
    # "] [" joined after the commas go
    assert code_reference("[[1, 2],\n [3, 4]]") == "[[1 2][3 4]]"


def test_code_prediction_takes_the_last_words() -> None:
    # reference "[1, 2]": 2 words + 3 = 5 kept; "will be" and "of the code" are dropped
    assert code_prediction("The output of the code will be [1, 2]", "[1, 2]") == "The output [1 2]"


def test_code_prediction_after_the_final_output() -> None:
    # "is" dropped; the words after "the final output", 1 + 3 of them (a leading "" first)
    assert code_prediction("Thus the final output is 7 and then more", "7") == " 7 and then"


def test_judge_reference_and_prediction() -> None:
    assert judge_reference("True [fact: False]") == ("true", "false")
    # the first word holding "true" or "false" decides each part ("untrue" holds "true")
    assert judge_prediction("Yes, it is TRUE. [fact: It is false]") == ("true", "false")
    assert judge_prediction("Untrue [fact: unsure]") == ("true", "<error>")
    with pytest.raises(ValueError, match="fact"):
        judge_prediction("True")
