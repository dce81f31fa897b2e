"""Agreement of judge and human labels: accuracy, Cohen's kappa, per-label precision, recall and
F1, the confusion matrix, and for SummHay coverage the linking agreement and the scores'
instance-level correlation and bias, as SummHay's judge benchmark reports them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import StatisticsError, correlation, fmean
from typing import Any

from benchsmith_scoring.summhay import COVERAGE_SCORE


def cohen_kappa(human: Sequence[str], judge: Sequence[str]) -> float | None:
    """Cohen's kappa, ``(p_o - p_e) / (1 - p_e)``: observed agreement against the agreement
    expected from each rater's label shares; ``None`` when undefined (no items, or both raters
    give one and the same label throughout)."""
    n = len(human)
    if n != len(judge):
        raise ValueError(f"{n} human labels but {len(judge)} judge labels")
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(human, judge, strict=True)) / n
    ours, theirs = Counter(human), Counter(judge)
    expected = sum(ours[label] * theirs[label] for label in ours) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def agreement(human: Sequence[str], judge: Sequence[str], labels: Sequence[str]) -> dict[str, Any]:
    """Accuracy, kappa, per-label precision/recall/F1 with counts, and the confusion matrix
    (``matrix[i][j]``: human said ``labels[i]``, judge ``labels[j]``)."""
    pairs = Counter(zip(human, judge, strict=True))
    per_label: dict[str, dict[str, Any]] = {}
    for label in labels:
        hits = pairs[(label, label)]
        said, given = sum(j == label for j in judge), sum(h == label for h in human)
        precision, recall = _ratio(hits, said), _ratio(hits, given)
        f1 = (
            2 * precision * recall / (precision + recall)
            if precision is not None and recall is not None and precision + recall
            else None
        )
        per_label[label] = {
            "human": given,
            "judge": said,
            "agree": hits,
            "precision": precision,
            "recall": recall,
            "f1": f1,
        }
    return {
        "accuracy": _ratio(sum(pairs[(x, x)] for x in labels), len(human)),
        "kappa": cohen_kappa(human, judge),
        "labels": per_label,
        "confusion": {
            "labels": list(labels),
            "rows": "human",
            "columns": "judge",
            "matrix": [[pairs[(h, j)] for j in labels] for h in labels],
        },
    }


def coverage_extras(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Linking agreement, and SummHay's instance-level correlation and bias of the scores."""
    answered = [r for r in rows if r["status"] == "ok"]
    compared = [
        r for r in answered if r["bullet_id"] is not None and r["judge_bullet_id"] is not None
    ]
    agree = sum(r["bullet_id"] == r["judge_bullet_id"] for r in compared)
    ours = [COVERAGE_SCORE[r["label"]] for r in answered]
    theirs = [COVERAGE_SCORE[r["judge_label"]] for r in answered]
    try:
        pearson: float | None = correlation(ours, theirs)
    except StatisticsError:  # fewer than two items, or one side constant
        pearson = None
    return {
        "linking": {
            "compared": len(compared),
            "agree": agree,
            "accuracy": _ratio(agree, len(compared)),
            "human_linked": sum(r["human_linked"] for r in rows),
        },
        "coverage_pearson": pearson,
        "coverage_bias": fmean(theirs) - fmean(ours) if answered else None,
    }
