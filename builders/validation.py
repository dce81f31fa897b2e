"""Item labels from a reference panel's answers: solvability, the closed-book share, difficulty
after LongBench Pro, and the noise floor.

Each panel model answers an item in up to three conditions: with its gold evidence only
(``evidence``, the "clean-document" condition), with nothing (``closed_book``), and with another
item's evidence (``shuffled``). An answer carries the item's own score in [0, 1] (AK, the share
of lead sentences supported, the share of gold documents an insight is found in), or ``None``
with the reason when the ask failed: a failed answer is counted, never scored 0.

- ``solvable``: the share of the models that answered with the evidence whose score reaches
  ``correct_at``;
- ``closed_book``: the same share without the evidence (the contamination signal), where the
  dataset has a closed-book condition;
- ``difficulty``: LongBench Pro's cascade (Section 3.5) over the full-context answers (LV-Eval:
  the item's record at its shortest level; an item without one, and the other datasets, whose
  evidence is their whole context, use the evidence answers), with its "at most one of five
  models" as a share (``fail_share``): extreme when the high tier fails the item, else hard when
  the mid tier does, else moderate when the low tier does, else easy.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any, Literal

Tier = Literal["high", "mid", "low"]
TIERS: tuple[Tier, ...] = ("high", "mid", "low")
LEVELS = ("easy", "moderate", "hard", "extreme")
CASCADE: tuple[tuple[Tier, str], ...] = (("high", "extreme"), ("mid", "hard"), ("low", "moderate"))
"""Each tier and the level an item gets when that tier fails it, in LongBench Pro's order."""
EVIDENCE, CLOSED_BOOK, SHUFFLED = "evidence", "closed_book", "shuffled"
FULL_CONTEXT = "full_context"
"""An LV-Eval item asked with its whole record context (the shortest level, clean)."""
CONDITIONS = (EVIDENCE, FULL_CONTEXT, CLOSED_BOOK, SHUFFLED)
UNSOLVABLE = "unsolvable"
UNLABELLED = "unlabelled"
"""The drop reason of an item under ``min_solvable``."""


@dataclass(frozen=True)
class PanelAnswer:
    """One model's answer to one item in one condition: its score, or why it failed."""

    dataset: str
    item_id: str
    model: str
    tier: Tier
    condition: str
    score: float | None
    reason: str = ""


@dataclass(frozen=True)
class Label:
    """An item's labels from the panel (``None`` where no model answered in that condition)."""

    dataset: str
    item_id: str
    solvable: float | None
    closed_book: float | None
    difficulty: str | None
    answered: int
    """Models that answered with the evidence (a failed ask is not an answer)."""
    failed: int
    """Asks of this item that failed, in every condition."""
    unanswered: tuple[str, ...] = ()
    """Conditions it was asked in whose every ask failed: a label with no answer behind it."""


def correct_share(answers: Sequence[PanelAnswer], correct_at: float) -> float | None:
    """The share of scored answers reaching ``correct_at``; ``None`` when none was scored."""
    scored = [a.score for a in answers if a.score is not None]
    if not scored:
        return None
    return sum(s >= correct_at for s in scored) / len(scored)


def difficulty(answers: Sequence[PanelAnswer], correct_at: float, fail_share: float) -> str | None:
    """LongBench Pro's level of an item from its evidence answers; ``None`` when none scored."""
    by_tier: dict[str, list[PanelAnswer]] = defaultdict(list)
    for a in answers:
        if a.score is not None:
            by_tier[a.tier].append(a)
    if not by_tier:
        return None
    for tier, level in CASCADE:
        share = correct_share(by_tier.get(tier, []), correct_at)
        if share is not None and share <= fail_share:
            return level
    return "easy"


def label_items(
    answers: Iterable[PanelAnswer], correct_at: float, fail_share: float
) -> list[Label]:
    """Every item's labels, in the order items first appear in ``answers``."""
    grouped: dict[tuple[str, str], list[PanelAnswer]] = defaultdict(list)
    for a in answers:
        grouped[(a.dataset, a.item_id)].append(a)
    labels = []
    for (dataset, item_id), given in grouped.items():
        evidence = [a for a in given if a.condition == EVIDENCE]
        closed = [a for a in given if a.condition == CLOSED_BOOK]
        full = [a for a in given if a.condition == FULL_CONTEXT]
        asked = {EVIDENCE: evidence, CLOSED_BOOK: closed, FULL_CONTEXT: full}
        labels.append(
            Label(
                dataset,
                item_id,
                solvable=correct_share(evidence, correct_at),
                closed_book=correct_share(closed, correct_at),
                difficulty=difficulty(full or evidence, correct_at, fail_share),
                answered=sum(a.score is not None for a in evidence),
                failed=sum(a.score is None for a in given),
                unanswered=tuple(
                    c for c, group in asked.items() if group and all(a.score is None for a in group)
                ),
            )
        )
    return labels


def unlabelled(label: Label) -> str:
    """Why ``label``'s item is dropped for want of answers ('' when every condition it was
    asked in has one): a label no model's answer stands behind is never published."""
    if not label.unanswered:
        return ""
    return (
        f"{UNLABELLED}: every {' and '.join(label.unanswered)} answer failed ({label.failed} "
        "failed asks, in the stage's llm_failures.parquet; a rerun asks them again)"
    )


def unsolvable(label: Label, min_solvable: float) -> str:
    """Why ``label``'s item is dropped under ``min_solvable`` ('' when it is kept: an item no
    model answered is kept, its labels empty)."""
    if label.solvable is None or label.solvable >= min_solvable or min_solvable <= 0:
        return ""
    right = round(label.solvable * label.answered)
    return (
        f"{UNSOLVABLE}: {right} of {label.answered} reference models answered correctly with "
        f"the evidence (solvable {label.solvable:.2f} < min_solvable {min_solvable:g})"
    )


def noise_floor(answers: Iterable[PanelAnswer], correct_at: float) -> dict[str, dict[str, float]]:
    """Per dataset, the panel's answers with another item's evidence: how many, their mean
    score and the share counted correct (what chance and guessing reach)."""
    by_dataset: dict[str, list[float]] = defaultdict(list)
    for a in answers:
        if a.condition == SHUFFLED and a.score is not None:
            by_dataset[a.dataset].append(a.score)
    return {
        d: {
            "answers": len(scores),
            "mean_score": round(fmean(scores), 4),
            "correct_share": round(sum(s >= correct_at for s in scores) / len(scores), 4),
        }
        for d, scores in sorted(by_dataset.items())
    }


def distribution(labels: Iterable[Label]) -> dict[str, dict[str, int]]:
    """Per dataset, items per difficulty level (``unlabelled`` when no model answered)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for label in labels:
        counts[label.dataset][label.difficulty or "unlabelled"] += 1
    order = (*LEVELS, "unlabelled")
    return {d: {level: c[level] for level in order if c[level]} for d, c in sorted(counts.items())}


def model_failures(answers: Iterable[PanelAnswer]) -> dict[str, dict[str, int]]:
    """Per model, asks answered and failed, and the failures by reason class (the text before
    the first colon)."""
    out: dict[str, dict[str, int]] = {}
    for a in answers:
        row = out.setdefault(a.model, {"answered": 0, "failed": 0})
        if a.score is None:
            row["failed"] += 1
            kind = a.reason.split(":", 1)[0] or "unknown"
            row[f"failed_{kind}"] = row.get(f"failed_{kind}", 0) + 1
        else:
            row["answered"] += 1
    return out


def card_markdown(
    dataset: str,
    report: dict[str, Any],
    published: dict[str, dict[str, int]],
    by_release: dict[str, dict[str, int]],
    left_out: Mapping[str, int],
) -> str:
    """The card's section on the panel's labels of one dataset: the panel, the difficulty of
    what each config and each release publishes, the noise floor and what was left out (items
    by the first word of their drop reason)."""
    models = ", ".join(f"{m['name']} ({m['tier']}: {m['backend']} {m['model']})"
                       for m in report.get("panel", []))  # fmt: skip
    head = ["| | " + " | ".join((*LEVELS, "unlabelled")) + " |", "|---|" + "---:|" * 5]

    def table(counts: dict[str, dict[str, int]]) -> list[str]:
        return head + [
            f"| {name} | " + " | ".join(str(c.get(k, 0)) for k in (*LEVELS, "unlabelled")) + " |"
            for name, c in counts.items()
        ]

    lines = [
        "### Validation by a reference panel",
        "",
        f"Panel: {models}. An answer counts as correct from a score of "
        f"{report.get('correct_at')}; `solvable` is the share of the panel answering correctly "
        "with the item's evidence, `closed_book` without it. `difficulty` follows LongBench "
        f"Pro's cascade (a tier fails an item when at most {report.get('fail_share')} of it "
        "answers correctly: extreme when the high tier fails, hard the mid tier, moderate the "
        "low tier, else easy).",
        "",
        "Items per config:",
        "",
        *table(published),
        "",
        "Items per release:",
        "",
        *table(by_release),
    ]
    floor = report.get("noise_floor", {}).get(dataset)
    if floor:
        lines += [
            "",
            f"Noise floor: with another item's evidence the panel scores {floor['mean_score']} "
            f"on average and is counted correct on {floor['correct_share']:.0%} of "
            f"{floor['answers']} answers.",
        ]
    if left_out:
        why = ", ".join(
            f"{n} {UNSOLVABLE} (`validate.min_solvable` {report.get('min_solvable')})"
            if reason == UNSOLVABLE
            else f"{n} {reason} (every answer in a condition failed)"
            for reason, n in sorted(left_out.items())
        )
        lines += ["", f"Left out: {why}."]
    return "\n".join(lines)
