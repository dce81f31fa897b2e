"""L-Eval's score for a whole task, on its 0-100 scale, as ``Evaluation/auto_eval.py`` prints it.

- ``exam``: exact match on the answers reduced per task (:mod:`.answers`), averaged.
  topic_retrieval_longchat is the mean of three scores, one per retrieved topic (items 0, 3, 6..
  ask for the first, 1, 4, 7.. the second ...); sci_fi the mean of its loyalty and fact scores.
- ``f1``: word F1, averaged.
- ``rouge``: ROUGE-1/2/L F-measures, each averaged; the score is their geometric mean.

Every figure is rounded to 4 decimals as L-Eval rounds it (before the topic and sci_fi means).
With ``mode="readme"`` the answers are reduced the same way (the README does not say how), then
scored with the README's exact match, every topic question counting ``100 / n``; the ROUGE score
is the average ROUGE-L (the README's leaderboard column).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Literal

from .answers import (
    code_prediction,
    code_reference,
    is_option_task,
    judge_prediction,
    judge_reference,
    math_answer,
    option_prediction,
    option_reference,
)
from .metrics import ROUGE_TYPES, Mode, exact_match, f1, rouge

Evaluation = Literal["exam", "f1", "rouge"]
TOPIC_TASK = "topic_retrieval_longchat"
TOPICS = 3  # first, second and third topic questions take turns
JUDGE_TASK = "sci_fi"

PairMetric = Callable[[str, str], float]


def reduced(task: str, prediction: str, reference: str) -> tuple[str, str]:
    """The (prediction, reference) answers L-Eval compares for one item of an exam task."""
    if is_option_task(task):
        return option_prediction(prediction, "coursera" in task), option_reference(reference)
    if "gsm" in task:
        return math_answer(prediction), math_answer(reference)
    if "codeU" in task:
        return code_prediction(prediction, reference), code_reference(reference)
    return prediction, reference


def percent(metric: PairMetric, predictions: Sequence[str], references: Sequence[str]) -> float:
    """100 times the mean of metric over the pairs, rounded to 4 decimals."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    if not predictions:
        raise ValueError("no items to score")
    total = 0.0
    for prediction, reference in zip(predictions, references, strict=True):
        total += metric(prediction, reference)
    return round(100.0 * total / len(predictions), 4)


def exam_score(
    task: str,
    predictions: Sequence[str],
    references: Sequence[str],
    mode: Mode = "reference_code",
) -> float:
    """A closed-ended task's exact-match score (0-100)."""
    metric: PairMetric = functools.partial(exact_match, mode=mode)
    if JUDGE_TASK in task:
        return _judge_score(predictions, references, metric)
    if TOPIC_TASK in task and mode == "reference_code":
        parts = [percent(metric, predictions[k::TOPICS], references[k::TOPICS])
                 for k in range(TOPICS)]  # fmt: skip
        return sum(parts) / TOPICS
    pairs = [reduced(task, p, r) for p, r in zip(predictions, references, strict=True)]
    return percent(metric, [p for p, _ in pairs], [r for _, r in pairs])


def _judge_score(
    predictions: Sequence[str], references: Sequence[str], metric: PairMetric
) -> float:
    """sci_fi: the mean of the loyalty and the fact exact-match scores."""
    chosen = [judge_prediction(p) for p in predictions]
    gold = [judge_reference(r) for r in references]
    parts = [percent(metric, [c[k] for c in chosen], [g[k] for g in gold]) for k in (0, 1)]
    return sum(parts) / 2


def f1_score(predictions: Sequence[str], references: Sequence[str]) -> float:
    """An F1 task's score (0-100)."""
    return percent(f1, predictions, references)


def rouge_scores(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """rouge1, rouge2, rougeL (each averaged, 0-100) and their geometric_mean, as L-Eval
    prints them: the mean is taken over per-item percentages, rounded last."""
    if len(predictions) != len(references) or not predictions:
        raise ValueError("ROUGE needs as many predictions as references, and at least one")
    results = [rouge(p, r) for p, r in zip(predictions, references, strict=True)]
    means = {
        name: sum(getattr(r, name) * 100 for r in results) / len(results) for name in ROUGE_TYPES
    }
    geometric = (means["rouge1"] * means["rouge2"] * means["rougeL"]) ** (1.0 / 3.0)
    return {
        name: round(value, 4) for name, value in (means | {"geometric_mean": geometric}).items()
    }


def task_score(
    task: str,
    evaluation: Evaluation,
    predictions: Sequence[str],
    references: Sequence[str],
    mode: Mode = "reference_code",
) -> float:
    """A task's L-Eval score (0-100): exam, f1 or rouge as its items' ``evaluation`` says."""
    if evaluation == "exam":
        return exam_score(task, predictions, references, mode)
    if evaluation == "f1":
        return f1_score(predictions, references)
    if evaluation == "rouge":
        scores = rouge_scores(predictions, references)
        return scores["rougeL"] if mode == "readme" else scores["geometric_mean"]
    raise ValueError(f"unknown evaluation {evaluation!r}: use exam, f1 or rouge")
