"""The card's "Audit" section: how many items people reviewed, how often they accepted each field,
and how far reviewers agree (Cohen's kappa for two reviewers, Fleiss' kappa for more).

Agreement is measured on the decision (accept or reject) and on each field's verdict, over the
items reviewed by more than one person. With exactly two reviewers in a dataset it is Cohen's
kappa over the items both reviewed (scikit-learn's ``cohen_kappa_score``); with three or more it
is Fleiss' kappa over the items reviewed by the largest number of them that reviewed any one item
(Fleiss' kappa needs the same number of ratings per item; the raters may differ). A kappa is
undefined, and shown as "n/a", when every rating falls in one category (chance agreement is 1).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.publish.release import markdown_table
from pipelines.publish.reviews import TARGETS, DatasetReview, Review, latest
from pipelines.publish.statistics import StatTable

DECISION = "decision"
"""The name the tables give the accept/reject decision, beside the fields."""


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa (Fleiss 1971) of ``counts[i][j]``, the raters who put item ``i`` in
    category ``j``; every row sums to the same number of raters (at least 2). NaN when chance
    agreement is 1 (every rating in one category).

    ``P_i = (sum_j n_ij^2 - n) / (n (n - 1))``, ``p_j = sum_i n_ij / (N n)``,
    ``kappa = (mean P_i - sum_j p_j^2) / (1 - sum_j p_j^2)``.
    """
    raters = {sum(row) for row in counts}
    if len(raters) != 1 or (n := raters.pop()) < 2:
        raise ValueError("Fleiss' kappa needs the same number (2 or more) of ratings per item")
    items = len(counts)
    shares = [sum(column) / (items * n) for column in zip(*counts, strict=True)]
    agreement = sum((sum(c * c for c in row) - n) / (n * (n - 1)) for row in counts) / items
    chance = sum(p * p for p in shares)
    return math.nan if chance == 1 else (agreement - chance) / (1 - chance)


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float:
    """Cohen's kappa of two raters' labels on the same items (scikit-learn's); NaN when chance
    agreement is 1."""
    if len(set(first) | set(second)) == 1:
        return math.nan
    from sklearn.metrics import cohen_kappa_score  # about 1 s to import: only when needed

    return float(cohen_kappa_score(list(first), list(second)))


@dataclass(frozen=True)
class Agreement:
    """Agreement on one decision or field: items rated by several reviewers, raters per item,
    the kappa and which one."""

    what: str
    items: int
    raters: int
    kappa: float
    statistic: str


def ratings(reviews: list[Review]) -> dict[str, dict[str, dict[str, str]]]:
    """What (decision or field) -> item -> reviewer -> label, from the latest lines."""
    out: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    for review in latest(reviews):
        out[DECISION][review.item][review.reviewer] = review.decision
        for name, verdict in review.fields.items():
            out[name][review.item][review.reviewer] = verdict.verdict
    return out


def agreement(what: str, by_item: dict[str, dict[str, str]], reviewers: int) -> Agreement | None:
    """Cohen's kappa with two reviewers in all, Fleiss' with more; None when no item has two."""
    most = max((len(r) for r in by_item.values()), default=0)
    if most < 2:
        return None
    shared = {item: labels for item, labels in by_item.items() if len(labels) == most}
    if reviewers == 2:
        pairs = [sorted(labels.items()) for labels in shared.values()]
        kappa = cohen_kappa([p[0][1] for p in pairs], [p[1][1] for p in pairs])
        return Agreement(what, len(shared), 2, kappa, "Cohen's kappa")
    categories = sorted({label for labels in shared.values() for label in labels.values()})
    counts = [[Counter(labels.values())[c] for c in categories] for labels in shared.values()]
    return Agreement(what, len(shared), most, fleiss_kappa(counts), "Fleiss' kappa")


def accept_rates(reviews: list[Review], order: Sequence[str]) -> list[list[object]]:
    """Rows of ``(what, ratings, accepted or correct, rate)`` for the decision and each field."""
    rows: list[list[object]] = []
    for what, by_item in sorted(ratings(reviews).items(), key=lambda kv: _rank(kv[0], order)):
        labels = [label for item in by_item.values() for label in item.values()]
        good = sum(label in ("accept", "correct") for label in labels)
        rows.append([what, len(labels), good, f"{good / len(labels):.1%}"])
    return rows


def _rank(what: str, order: Sequence[str]) -> int:
    return [DECISION, *order].index(what) if what in [DECISION, *order] else len(order) + 1


def rejected_table(review: DatasetReview) -> StatTable:
    """The items left out in review, as a drops table of the card's statistics."""
    rows = [
        [r.config, r.item, r.reviewer, r.reason]
        for r in sorted(review.rejections().values(), key=lambda r: r.item)
    ]
    return StatTable(
        "Items rejected in review",
        f"Left out of every config that carries them, by `{review.path.parent.name}/"
        f"{review.path.name}` ({len(rows)} in all); see Audit.",
        ["config", "item", "reviewer", "reason"],
        rows,
    )


def audit_section(review: DatasetReview) -> str:
    """The card's ``## Audit`` section (Markdown) of one dataset's reviews."""
    last = latest(review.reviews)
    reviewers = sorted({r.reviewer for r in last})
    items = {r.item for r in last}
    order = [f.name for f in TARGETS[review.dataset].fields]
    source = f"`{review.path.parent.name}/{review.path.name}`"
    rejected = len(review.rejections())
    parts = [
        "## Audit",
        f"People reviewed {_count(len(items), 'item')} of this release by hand "
        f"({_count(len(reviewers), 'reviewer')}: {', '.join(reviewers)}; {source}, written by "
        f"`benchsmith review`). {_count(rejected, 'rejected item')} left out (listed under "
        "Statistics); corrections are applied to the published fields, each listed below with "
        "its reviewer.",
        "### Accept rate\n\nThe share of reviews accepting the item (decision) or finding a "
        "field correct, over each reviewer's latest review of each item.\n\n"
        + markdown_table(
            ["", "reviews", "accepted or correct", "rate"], accept_rates(review.reviews, order)
        ),
    ]
    found = [a for what, by in ratings(review.reviews).items()
             if (a := agreement(what, by, len(reviewers)))]  # fmt: skip
    if found:
        rows = [
            [a.what, a.items, a.raters, "n/a" if math.isnan(a.kappa) else f"{a.kappa:.3f}",
             a.statistic]
            for a in sorted(found, key=lambda a: _rank(a.what, order))
        ]  # fmt: skip
        parts.append(
            "### Agreement between reviewers\n\nOver the items reviewed by several people; n/a "
            "where every rating is the same.\n\n"
            + markdown_table(["", "items", "reviewers per item", "kappa", "statistic"], rows)
        )
    fixes = [
        [item, name, _short(value), r.reviewer, r.at]
        for item, fields in sorted(review.corrections().items())
        for name, (value, r) in fields.items()
    ]
    if fixes:
        parts.append(
            "### Corrections\n\nApplied to the published field in every config carrying the "
            "item (in a KPR row with its replacement rules applied).\n\n"
            + markdown_table(["item", "field", "corrected to", "reviewer", "at"], fixes)
        )
    return "\n\n".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _short(value: object, width: int = 80) -> str:
    text = " | ".join(value) if isinstance(value, list) else str(value)
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"
