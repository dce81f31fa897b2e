"""Agreement of judge and human labels: accuracy, Cohen's kappa, per-label precision, recall and
F1, the confusion matrix, and for SummHay coverage the linking agreement and the scores'
instance-level correlation and bias, as SummHay's judge benchmark reports them. For scores on
a scale (WikiGenBench's rubric judges): exact and within-one agreement, Spearman's rho,
quadratic-weighted kappa and the mean bias (:func:`score_agreement`)."""

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


def failures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The failed judge answers with their reasons (and dimension, for scores), and how often
    each kind of reason came."""
    failed = [r for r in rows if r["status"] != "ok"]
    keys = ("id", "where", "dimension", "reason")
    return {
        "failures": [{k: r[k] for k in keys if k in r} for r in failed],
        "failure_reasons": dict(Counter(r["reason"].split(":", 1)[0] for r in failed)),
    }


def _mid_ranks(values: Sequence[int]) -> list[float]:
    """1-based ranks, ties given the mean of the ranks they span."""
    counts, below, rank = Counter(values), 0, {}
    for value in sorted(counts):
        rank[value] = below + (counts[value] + 1) / 2
        below += counts[value]
    return [rank[v] for v in values]


def spearman(human: Sequence[int], judge: Sequence[int]) -> float | None:
    """Spearman's rho: Pearson's correlation of the mid-ranks (``scipy.stats.spearmanr``'s
    definition); ``None`` when undefined (fewer than 2 items, or one side constant)."""
    try:
        return correlation(_mid_ranks(human), _mid_ranks(judge))
    except StatisticsError:
        return None


def quadratic_kappa(human: Sequence[int], judge: Sequence[int]) -> float | None:
    """Quadratic-weighted kappa, ``1 - sum(w * O) / sum(w * E)`` with ``w = (h - j)**2`` on the
    scores themselves, so the distance counts over the scale's full range whether or not every
    score was given (``sklearn.metrics.cohen_kappa_score(weights="quadratic",
    labels=range(low, high + 1))``); ``None`` when undefined (no items, or both raters give
    one and the same score throughout)."""
    n = len(human)
    if n != len(judge):
        raise ValueError(f"{n} human scores but {len(judge)} judge scores")
    ours, theirs = Counter(human), Counter(judge)
    expected = sum(ours[a] * theirs[b] * (a - b) ** 2 for a in ours for b in theirs) / (n * n or 1)
    if expected == 0:
        return None
    observed = sum((a - b) ** 2 for a, b in zip(human, judge, strict=True)) / n
    return 1 - observed / expected


def _undefined(human: Sequence[int], judge: Sequence[int]) -> list[str]:
    """Why rho or kappa is ``None``, in words."""
    if not human:
        return ["no answered labels: nothing to compare"]
    notes = []
    if len(human) < 2:
        notes.append("Spearman's rho is undefined for a single label")
    else:
        for who, scores in (("human", human), ("judge", judge)):
            if len(set(scores)) == 1:
                notes.append(f"Spearman's rho is undefined: the {who} scores are all {scores[0]}")
    if set(human) == set(judge) and len(set(human)) == 1:
        notes.append(f"quadratic kappa is undefined: human and judge both give {human[0]}")
    return notes


def score_agreement(
    human: Sequence[int], judge: Sequence[int], bounds: tuple[int, int]
) -> dict[str, Any]:
    """Agreement of scores on the scale ``bounds`` (inclusive): ``n``, exact and within-one
    agreement, Spearman's rho, quadratic-weighted kappa, the mean judge-minus-human bias, the
    confusion matrix over the whole scale (rows human, columns judge), and ``notes`` saying
    why a figure is ``None``."""
    low, high = bounds
    scale = list(range(low, high + 1))
    n = len(human)
    gaps = [j - h for h, j in zip(human, judge, strict=True)]
    pairs = Counter(zip(human, judge, strict=True))
    return {
        "scale": [low, high],
        "n": n,
        "exact": _ratio(sum(g == 0 for g in gaps), n),
        "within_one": _ratio(sum(abs(g) <= 1 for g in gaps), n),
        "spearman": spearman(human, judge),
        "quadratic_kappa": quadratic_kappa(human, judge),
        "bias": fmean(gaps) if gaps else None,
        "confusion": {
            "labels": scale,
            "rows": "human",
            "columns": "judge",
            "matrix": [[pairs[(h, j)] for j in scale] for h in scale],
        },
        "notes": _undefined(human, judge),
    }
