"""L-Eval's metrics on hand-worked cases, each worked out from L-Eval's public code
(``Evaluation/em.py``, ``f1.py``, ``rouge.py``) or, for ``mode="readme"``, its README."""

from __future__ import annotations

import pytest

from benchsmith_scoring.leval.metrics import (
    RougeResult,
    exact_match,
    f1,
    is_option_answer,
    length_instruction,
    option_letters,
    output_length,
    rouge,
    with_length_instruction,
)


@pytest.mark.parametrize(
    ("prediction", "reference", "expected"),
    [
        # option references (only A-D left after em.py's normalisation)
        ("ACD", "ACD", 1.0),
        ("AC", "ACD", 0.25),  # characters a subset of the reference's: a quarter
        ("BA", "AB", 0.25),  # same letters, other order: not equal, so only a subset
        ("AD", "ABC", 0.0),  # D is not in the reference
        ("None", "B", 0.0),  # an empty option prediction, as auto_eval.py rewrites it
        ("", "AB", 0.25),  # the empty set is a subset
        ("A.", "A", 1.0),  # punctuation is removed before comparing
        # other references: same number, else the reference contained in the prediction
        ("3.0", "3", 1.0),
        ("3.50", "3.5", 1.0),
        ("4", "14", 0.0),  # both numbers and unequal: no containment test
        ("14 apples", "4", 1.0),  # not a number, and "4" occurs in "14apples"
        ("I think it was The Benefits of Volunteering.", "The benefits of volunteering", 1.0),
        ("volunteering", "The benefits of volunteering", 0.0),
        ("b", "B", 0.0),  # case is kept for option references
        ("True", "true", 1.0),  # but not for containment
    ],
)
def test_exact_match_as_leval_code(prediction: str, reference: str, expected: float) -> None:
    assert exact_match(prediction, reference) == expected
    assert exact_match(prediction, reference, "reference_code") == expected


@pytest.mark.parametrize(
    ("prediction", "reference", "expected"),
    [
        ("A, C and D", "ACD", 1.0),
        ("The answer is ACD.", "A, C, D", 1.0),
        ("(D)(A)(C)", "ACD", 1.0),
        ("BA", "AB", 1.0),  # the same set of options (reference_code: 0.25)
        ("(A)(C)", "ACD", 0.25),  # a strict subset: "does not cover all correct answers"
        ("Answer: C", "ACD", 0.25),  # the capital A of "Answer" is inside a word
        ("A and B", "ACD", 0.0),  # B is wrong
        ("A, B, C, D", "ACD", 0.0),  # a superset holds a wrong option
        ("Because", "BCE", 0.0),  # B, C, E only inside a word: nothing chosen
        ("", "B", 0.0),
        ("3.0", "3", 0.0),  # exact match of the text (reference_code: 1)
    ],
)
def test_exact_match_as_leval_readme(prediction: str, reference: str, expected: float) -> None:
    assert exact_match(prediction, reference, "readme") == expected


def test_readme_option_letters_and_option_answers() -> None:
    assert option_letters("Answer: (B), D and E") == frozenset("BDE")
    assert option_letters("Definitely Correct") == frozenset()
    assert is_option_answer("ACD") and is_option_answer("(A) and [C]")
    assert not is_option_answer("Eiffel Tower") and not is_option_answer("a")


def test_readme_exact_match_falls_back_to_normalised_text() -> None:
    # normalised: "eiffel tower" on both sides
    assert exact_match("The Eiffel Tower!", "eiffel tower", "readme") == 1.0
    assert exact_match("The Eiffel Tower in Paris", "eiffel tower", "readme") == 0.0


def test_f1_over_normalised_words() -> None:
    # f1.py: lower-case, no punctuation, no a/an/the
    # "cat sat on mat" (4) vs "cat sat" (2): overlap 2, P = 1/2, R = 1 -> 2/3
    assert f1("The cat sat on the mat.", "A cat sat") == pytest.approx(2 / 3)
    assert f1("dog", "cat") == 0.0


def test_rouge_is_unstemmed() -> None:
    # tokens: pred the cats sat on the mat, ref the cat sat on a mat (6 each; "cats" != "cat")
    # rouge1: the(1) sat on mat = 4 -> P = R = 4/6
    # rouge2: only sat-on shared of 5 bigrams each -> 1/5
    # rougeL: LCS the sat on mat = 4 -> 4/6
    result = rouge("the cats sat on the mat", "the cat sat on a mat")
    assert result.rouge1 == pytest.approx(2 / 3)
    assert result.rouge2 == pytest.approx(1 / 5)
    assert result.rougeL == pytest.approx(2 / 3)


def test_rouge_stemmed_on_request() -> None:
    # stemmed, "cats" -> "cat": rouge1 5/6, rouge2 the-cat cat-sat sat-on = 3/5, rougeL 5/6
    result = rouge("the cats sat on the mat", "the cat sat on a mat", stem=True)
    assert (result.rouge1, result.rouge2, result.rougeL) == pytest.approx((5 / 6, 3 / 5, 5 / 6))


def test_rouge_tokens_are_lower_case_ascii_words() -> None:
    # rouge-score's tokenizer: lower case, anything but a-z0-9 separates words
    assert rouge("Hello, World!", "hello world") == RougeResult(1.0, 1.0, 1.0)
    # no a-z0-9 token at all: nothing to match
    assert rouge("北京", "北京") == RougeResult(0.0, 0.0, 0.0)
    # unigrams all shared (1.0), bigram "cats dogs" vs "dogs cats" none, LCS 1 of 2 -> 0.5
    assert rouge("cats dogs", "dogs cats") == RougeResult(1.0, 0.0, 0.5)


def test_length_instruction_words_and_characters() -> None:
    assert length_instruction("one two  three") == "The suggested output length is around 3 words."
    # 北京 (2) + 是首都 (3) = 5 characters, whitespace not counted
    assert (
        length_instruction("北京 是首都", unit="characters")
        == "The suggested output length is around 5 characters."
    )
    assert length_instruction("a b", template="We need {n} {unit}.") == "We need 2 words."
    assert (
        with_length_instruction("Summarise the meeting. ", "a b c")
        == "Summarise the meeting. The suggested output length is around 3 words."
    )


def test_length_instruction_tokens_needs_a_counter() -> None:
    with pytest.raises(ValueError, match="count"):
        length_instruction("one two three", unit="tokens")

    def count(text: str) -> int:
        return 2 * len(text.split())

    # 3 words -> 6 "tokens" by this counter
    assert (
        length_instruction("one two three", unit="tokens", count=count)
        == "The suggested output length is around 6 tokens."
    )
    assert output_length("one two three", "tokens", count) == 6
    with pytest.raises(ValueError, match="unit"):
        output_length("x", "lines")  # type: ignore[arg-type]
