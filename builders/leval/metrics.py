"""L-Eval's metrics: exact match for option answers, word F1, ROUGE, and the length instruction.

- ``exact_match`` scores multiple-choice answers by their set of option letters (A-E). Selecting
  only some of the correct options earns 0.25 (L-Eval's Coursera rule); any wrong option earns 0.
  A reference that is not made of option letters is compared as normalised text.
- ``f1`` is word-level F1 over normalised English words (the same tokens as LV-Eval's AK metric).
- ``rouge`` gives ROUGE-1, -2 and -L F-measures (stemmed) and their geometric mean.
- ``length_instruction`` is L-Eval's length-instruction-enhanced (LIE) evaluation: the prompt
  tells the model how long the reference is, so that length does not drive n-gram scores.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rouge_score import rouge_scorer

from builders.text import normalize_en, text_length, token_f1, tokens

Unit = Literal["words", "characters", "tokens"]

PARTIAL_CREDIT = 0.25
DEFAULT_TEMPLATE = "The suggested output length is around {n} {unit}."

# A whole reference made of option letters: "ACD", "A, C and D", "(B)", "[A][C]".
_SEP = r"[\s,;.()\[\]&]*"
_OPTION_ANSWER = re.compile(rf"{_SEP}(?:(?:and\b{_SEP})?[A-E]{_SEP})+")
# Option letters in a prediction: runs of capitals A-E that touch no other letter, so "A", "(C)"
# and "ACD" count but the capitals inside "Because" or "Answer" do not.
_OPTION_RUN = re.compile(r"(?<![A-Za-z])[A-E]+(?![A-Za-z])")


@dataclass(frozen=True)
class RougeResult:
    """ROUGE F-measures of one prediction and their geometric mean."""

    rouge1: float
    rouge2: float
    rougeL: float
    geometric_mean: float


def option_letters(text: str) -> frozenset[str]:
    """The option letters A-E that stand alone in text (bracketed, or between commas/spaces).

    Lower-case letters never count; a sentence-initial article "A" does too.
    """
    return frozenset("".join(_OPTION_RUN.findall(text)))


def is_option_answer(reference: str) -> bool:
    """Whether a reference consists only of option letters and separators."""
    return _OPTION_ANSWER.fullmatch(reference.strip()) is not None


def exact_match(prediction: str, reference: str) -> float:
    """1 for the same options (or same normalised text), 0.25 for a strict subset, else 0."""
    if not is_option_answer(reference):
        return float(normalize_en(prediction) == normalize_en(reference))
    gold, chosen = option_letters(reference), option_letters(prediction)
    if chosen == gold:
        return 1.0
    if chosen and chosen < gold:
        return PARTIAL_CREDIT
    return 0.0


def f1(prediction: str, reference: str) -> float:
    """Word-level F1 over normalised English words."""
    return token_f1(tokens(prediction, "en"), tokens(reference, "en"))


@functools.cache
def _scorer() -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def rouge(prediction: str, reference: str) -> RougeResult:
    """ROUGE-1/2/L F-measures (Porter-stemmed) and the cube root of their product."""
    scores = _scorer().score(reference, prediction)
    r1, r2, rl = (scores[name].fmeasure for name in ("rouge1", "rouge2", "rougeL"))
    product = r1 * r2 * rl
    return RougeResult(r1, r2, rl, product ** (1 / 3) if product > 0 else 0.0)


def output_length(
    text: str, unit: Unit = "words", count: Callable[[str], int] | None = None
) -> int:
    """Length of text in words (whitespace split), characters (no whitespace) or tokens."""
    if unit == "tokens":
        if count is None:
            raise ValueError("unit='tokens' needs a count function, e.g. a tokenizer's length")
        return count(text)
    if unit not in ("words", "characters"):
        raise ValueError(f"unknown length unit {unit!r}: use words, characters or tokens")
    return text_length(text, unit)


def length_instruction(
    reference: str,
    *,
    template: str = DEFAULT_TEMPLATE,
    unit: Unit = "words",
    count: Callable[[str], int] | None = None,
) -> str:
    """L-Eval's length instruction, with {n} the reference's length in unit."""
    return template.format(n=output_length(reference, unit, count), unit=unit)


def with_length_instruction(
    instruction: str,
    reference: str,
    *,
    template: str = DEFAULT_TEMPLATE,
    unit: Unit = "words",
    count: Callable[[str], int] | None = None,
) -> str:
    """The instruction followed, after a space, by the length instruction for reference."""
    sentence = length_instruction(reference, template=template, unit=unit, count=count)
    return f"{instruction.rstrip()} {sentence}"
