"""L-Eval's metrics on hand-worked cases."""

from __future__ import annotations

import pytest

from builders.leval.metrics import (
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
        ("A, C and D", "ACD", 1.0),
        ("The answer is ACD.", "A, C, D", 1.0),
        ("(D)(A)(C)", "ACD", 1.0),
        ("(A)(C)", "ACD", 0.25),  # a strict subset: L-Eval's 25%
        ("Answer: C", "ACD", 0.25),  # the capital A of "Answer" is inside a word
        ("A and B", "ACD", 0.0),  # B is wrong
        ("A, B, C, D", "ACD", 0.0),  # a superset holds a wrong option
        ("Because", "BCE", 0.0),  # B, C, E only inside a word: nothing chosen
        ("", "B", 0.0),
    ],
)
def test_exact_match_options(prediction: str, reference: str, expected: float) -> None:
    assert exact_match(prediction, reference) == expected


def test_option_letters_and_option_answers() -> None:
    assert option_letters("Answer: (B), D and E") == frozenset("BDE")
    assert option_letters("Definitely Correct") == frozenset()
    assert is_option_answer("ACD") and is_option_answer("(A) and [C]")
    assert not is_option_answer("Eiffel Tower") and not is_option_answer("a")


def test_exact_match_falls_back_to_normalised_text() -> None:
    # normalised: "eiffel tower" on both sides
    assert exact_match("The Eiffel Tower!", "eiffel tower") == 1.0
    assert exact_match("The Eiffel Tower in Paris", "eiffel tower") == 0.0


def test_f1_over_normalised_words() -> None:
    # "cat sat on mat" (4) vs "cat sat" (2): overlap 2, P = 1/2, R = 1 -> 2/3
    assert f1("The cat sat on the mat.", "A cat sat") == pytest.approx(2 / 3)
    assert f1("dog", "cat") == 0.0


def test_rouge_scores_and_geometric_mean() -> None:
    # stemmed tokens: pred "the cat sat on the mat", ref "the cat sat on a mat" (6 each)
    # rouge1: overlap the(1) cat sat on mat = 5 -> P = R = 5/6
    # rouge2: the-cat cat-sat sat-on shared out of 5 each -> 3/5
    # rougeL: LCS "the cat sat on mat" = 5 -> 5/6
    result = rouge("the cats sat on the mat", "the cat sat on a mat")
    assert result.rouge1 == pytest.approx(5 / 6)
    assert result.rouge2 == pytest.approx(3 / 5)
    assert result.rougeL == pytest.approx(5 / 6)
    # (5/6 * 3/5 * 5/6) ** (1/3) = (5/12) ** (1/3) ~ 0.7469
    assert result.geometric_mean == pytest.approx((5 / 12) ** (1 / 3))
    assert result.geometric_mean == pytest.approx(
        (result.rouge1 * result.rouge2 * result.rougeL) ** (1 / 3)
    )


def test_rouge_geometric_mean_is_zero_without_shared_bigrams() -> None:
    # unigrams all shared (1.0), bigram "cats dogs" vs "dogs cats" none, LCS 1 of 2 -> 0.5
    assert rouge("cats dogs", "dogs cats") == RougeResult(1.0, 0.0, 0.5, 0.0)


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
