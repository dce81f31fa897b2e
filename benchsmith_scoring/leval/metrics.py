"""L-Eval's metrics: exact match, word F1, ROUGE, and the length instruction.

Two readings, as for LV-Eval (``Mode``):

- ``reference_code`` (the default) is what L-Eval's public code computes (``Evaluation/em.py``,
  ``f1.py``, ``rouge.py`` and ``auto_eval.py``). Exact match, on answers already reduced per task
  (:mod:`.answers`): a reference made only of the letters A-D is an option answer,
  scored 1 when equal and 0.25 when the prediction's characters are a subset of the reference's;
  any other reference scores 1 when both parse as the same number ("3.0" = "3") or when the
  reference, lower-cased and without spaces, occurs in the prediction. ROUGE is rouge-score's
  ROUGE-1/2/L F-measure without stemming; a set's score is the geometric mean of the three
  averages (:mod:`benchsmith_scoring.leval.scores`).
- ``readme`` is what L-Eval's README describes: exact match compares option letters as sets (a
  strict subset earns a quarter, any wrong option 0) and other answers as normalised text; a
  set's ROUGE score is its average ROUGE-L.

``f1`` is the same in both: word F1 over lower-cased words without punctuation or articles.
``length_instruction`` is L-Eval's length-instruction-enhanced (LIE) evaluation: the prompt
tells the model how long the reference is, so that length does not drive n-gram scores.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..text import normalize_en, text_length, token_f1, tokens

if TYPE_CHECKING:
    from rouge_score import rouge_scorer

Unit = Literal["words", "characters", "tokens"]
Mode = Literal["readme", "reference_code"]

PARTIAL_CREDIT = 0.25
DEFAULT_TEMPLATE = "The suggested output length is around {n} {unit}."
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")

_CODE_OPTIONS = frozenset("ABCD")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")  # lower-case only: L-Eval's em.py keeps case

# README reading: a whole reference made of option letters: "ACD", "A, C and D", "(B)".
_SEP = r"[\s,;.()\[\]&]*"
_OPTION_ANSWER = re.compile(rf"{_SEP}(?:(?:and\b{_SEP})?[A-E]{_SEP})+")
# Option letters in a prediction: runs of capitals A-E that touch no other letter, so "A", "(C)"
# and "ACD" count but the capitals inside "Because" or "Answer" do not.
_OPTION_RUN = re.compile(r"(?<![A-Za-z])[A-E]+(?![A-Za-z])")


@dataclass(frozen=True)
class RougeResult:
    """ROUGE-1, -2 and -L F-measures of one prediction (a set's score: ``scores.rouge_scores``)."""

    rouge1: float
    rouge2: float
    rougeL: float


def exact_match(prediction: str, reference: str, mode: Mode = "reference_code") -> float:
    """1, 0.25 (part of the options) or 0; see the module docstring for the two modes."""
    if mode == "readme":
        return _exact_match_readme(prediction, reference)
    return _exact_match_code(prediction, reference)


def _normalize_keep_case(text: str) -> str:
    """em.py's normalisation: no punctuation, no lower-case a/an/the, single spaces."""
    return " ".join(_ARTICLES.sub(" ", text.translate(_PUNCTUATION)).split())


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _exact_match_code(prediction: str, reference: str) -> float:
    gold = _normalize_keep_case(reference)
    if set(gold) <= _CODE_OPTIONS:  # option letters only (or nothing left)
        chosen = _normalize_keep_case(prediction)
        if chosen == gold:
            return 1.0
        return PARTIAL_CREDIT if set(chosen) <= set(gold) else 0.0
    predicted, expected = _number(prediction), _number(reference)
    if predicted is not None and expected is not None:
        return float(predicted == expected)
    return float(_squashed(reference) in _squashed(prediction))


def _squashed(text: str) -> str:
    return text.lower().replace(" ", "")


def option_letters(text: str) -> frozenset[str]:
    """README reading: the option letters A-E that stand alone in text.

    Lower-case letters never count; a sentence-initial article "A" does too.
    """
    return frozenset("".join(_OPTION_RUN.findall(text)))


def is_option_answer(reference: str) -> bool:
    """README reading: whether a reference consists only of option letters and separators."""
    return _OPTION_ANSWER.fullmatch(reference.strip()) is not None


def _exact_match_readme(prediction: str, reference: str) -> float:
    if not is_option_answer(reference):
        return float(normalize_en(prediction) == normalize_en(reference))
    gold, chosen = option_letters(reference), option_letters(prediction)
    if chosen == gold:
        return 1.0
    if chosen and chosen < gold:
        return PARTIAL_CREDIT
    return 0.0


def f1(prediction: str, reference: str) -> float:
    """Word-level F1 over normalised English words (L-Eval's f1.py and README agree)."""
    return token_f1(tokens(prediction, "en"), tokens(reference, "en"))


@functools.cache
def _scorer(stem: bool) -> rouge_scorer.RougeScorer:
    from rouge_score import rouge_scorer  # only ROUGE needs it

    return rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=stem)


@functools.cache
def _tokenizer(stem: bool) -> Any:
    from rouge_score import tokenizers

    return tokenizers.DefaultTokenizer(use_stemmer=stem)


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """The length of the longest common subsequence of ``a`` and ``b``, exactly, computed
    bit-parallel (Hyyrö 2004: one row of the dynamic-programming table per integer, one pass
    over ``b``) instead of filling the whole table in Python, as rouge-score does."""
    if not a or not b:
        return 0
    positions: dict[str, int] = {}
    for i, token in enumerate(a):
        positions[token] = positions.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    row = full
    for token in b:
        matched = row & positions.get(token, 0)
        row = ((row + matched) | (row - matched)) & full
    return len(a) - row.bit_count()


def rouge_l(prediction: str, reference: str, *, stem: bool = False) -> float:
    """ROUGE-L F-measure exactly as rouge-score computes it (its tokenizer, its F-measure), with
    the longest common subsequence from :func:`lcs_length`."""
    from rouge_score import scoring

    target, predicted = _tokenizer(stem).tokenize(reference), _tokenizer(stem).tokenize(prediction)
    if not target or not predicted:
        return 0.0
    common = lcs_length(target, predicted)
    return scoring.fmeasure(common / len(predicted), common / len(target))


def rouge(prediction: str, reference: str, *, stem: bool = False) -> RougeResult:
    """ROUGE-1/2/L F-measures from rouge-score: lower-cased runs of a-z0-9, unstemmed as in
    L-Eval (``stem=True`` Porter-stems words longer than 3 letters). ROUGE-L equals
    rouge-score's own, from a faster exact longest common subsequence (:func:`rouge_l`)."""
    scores = _scorer(stem).score(reference, prediction)
    return RougeResult(
        scores["rouge1"].fmeasure,
        scores["rouge2"].fmeasure,
        rouge_l(prediction, reference, stem=stem),
    )


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
