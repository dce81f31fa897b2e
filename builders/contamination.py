"""Closed-book contamination probes, summarized for the metrics file and the dataset cards.

A probe asks the model an item with no context at all (an LV-Eval question alone; a
WikiGenBench title with zero documents) and scores the answer with the benchmark's own metric.
An item is *flagged* when that score reaches the dataset's threshold: the model answered it
without reading anything, so it likely saw the event in training. Items are split at the
model's declared knowledge cutoff (events created on or before that day, UTC, count as
before): a model that knows only what came before its cutoff flags items before it, never
after. Shares count scored items only; items whose ask failed are reported apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from statistics import fmean
from typing import Any

DATASET_NAMES = {"lveval": "LV-Eval", "wikigenbench": "WikiGenBench"}
"""Display names of the probed datasets."""

SIDES = ("before", "after", "undated")


def event_month(created_at: datetime | None) -> str | None:
    """``YYYY-MM`` of an event's creation (UTC), or ``None`` when it is unknown."""
    return created_at.astimezone(UTC).strftime("%Y-%m") if created_at else None


def side_of(created_at: datetime | None, cutoff: date) -> str:
    """``before`` (created on or before the cutoff day, UTC), ``after``, or ``undated``."""
    if created_at is None:
        return "undated"
    return "before" if created_at.astimezone(UTC).date() <= cutoff else "after"


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _group(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Scored items, flagged ones and their share; the mean score."""
    flagged = sum(bool(r["flagged"]) for r in rows)
    return {
        "items": len(rows),
        "flagged": flagged,
        "flagged_share": _share(flagged, len(rows)),
        "mean_score": round(fmean(r["score"] for r in rows), 4) if rows else None,
    }


def build_report(
    rows: Sequence[Mapping[str, Any]],
    *,
    model: str,
    cutoff: date | None,
    datasets: Sequence[str],
    metrics: Mapping[str, str],
    thresholds: Mapping[str, float],
) -> dict[str, Any]:
    """The probe's report from its item rows (``dataset``, ``item_id``, ``event_id``,
    ``event_created_at``, ``event_month``, ``status``, ``score``, ``flagged``)."""
    mine: dict[str, list[Mapping[str, Any]]] = {name: [] for name in datasets}
    for row in rows:
        mine.setdefault(row["dataset"], []).append(row)
    scored = {name: [r for r in items if r["status"] == "ok"] for name, items in mine.items()}
    split: dict[str, Any] | None = None
    if cutoff is not None:
        split = {}
        for name, items in scored.items():
            sides: dict[str, list[Mapping[str, Any]]] = {side: [] for side in SIDES}
            for row in items:
                sides[side_of(row["event_created_at"], cutoff)].append(row)
            split[name] = {side: _group(group) for side, group in sides.items()}
    by_month: dict[str, dict[str, Any]] = {}
    for name, items in scored.items():
        months: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for row in items:
            months[row["event_month"] or "undated"].append(row)
        by_month[name] = {m: _group(months[m]) for m in sorted(months)}
    return {
        "model": model,
        "cutoff": cutoff.isoformat() if cutoff else None,
        "metrics": {name: metrics.get(name, "") for name in mine},
        "thresholds": {name: thresholds.get(name) for name in mine},
        "probed": {name: len(items) for name, items in mine.items()},
        "failed": {name: len(items) - len(scored[name]) for name, items in mine.items()},
        "overall": {name: _group(items) for name, items in scored.items()},
        "before_after_cutoff": split,
        "by_month": by_month,
        "flagged": [
            {
                "dataset": r["dataset"],
                "item_id": r["item_id"],
                "event_id": r["event_id"],
                "score": round(r["score"], 4),
            }
            for items in scored.values()
            for r in items
            if r["flagged"]
        ],
    }


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _ratio(group: Mapping[str, Any] | None) -> str:
    if not group or not group["items"]:
        return "–"
    return f"{group['flagged']}/{group['items']} ({100 * group['flagged_share']:.1f}%)"


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def report_markdown(report: Mapping[str, Any]) -> str:
    """A dataset card's section on the probe: model, cutoff, items probed, the flagged shares
    before and after the cutoff, closed-book scores by event month, and the flagged items."""
    names = list(report["probed"])
    cutoff = report["cutoff"]
    split = report.get("before_after_cutoff") or {}
    rules = "; ".join(
        f"{DATASET_NAMES.get(n, n)}: {report['metrics'][n]} ≥ {report['thresholds'][n]}"
        for n in names
    )
    declared = (
        f"Declared knowledge cutoff: **{cutoff}** (events created on or before it count as before)."
        if cutoff
        else "Declared knowledge cutoff: none given, so items are not split before and after."
    )
    lines = [
        "## Contamination probe (closed-book)",
        "",
        f"The model **{_cell(report['model'])}** answered every item with no context at all "
        "(LV-Eval: the question alone; WikiGenBench: the article written from zero documents). "
        f"An item is flagged when that answer reaches the threshold ({rules}): the model "
        "answered it unread, so it likely saw the event in training.",
        "",
        declared,
        "",
        "| Dataset | Metric | Probed | Failed | Flagged | Before cutoff | After cutoff |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for n in names:
        sides = split.get(n) or {}
        lines.append(
            f"| {DATASET_NAMES.get(n, n)} | {_cell(report['metrics'][n])} | "
            f"{report['probed'][n]} | {report['failed'][n]} | {_ratio(report['overall'][n])} | "
            f"{_ratio(sides.get('before'))} | {_ratio(sides.get('after'))} |"
        )
    lines += [
        "",
        "### Closed-book scores by event month",
        "",
        "| Dataset | Month | Items | Mean score | Flagged |",
        "|---|---|---:|---:|---:|",
    ]
    for n in names:
        for month, group in report["by_month"][n].items():
            lines.append(
                f"| {DATASET_NAMES.get(n, n)} | {month} | {group['items']} | "
                f"{_score(group['mean_score'])} | {_ratio(group)} |"
            )
    lines += ["", "### Flagged items", ""]
    if report["flagged"]:
        lines += ["| Dataset | Item | Event | Score |", "|---|---|---|---:|"]
        lines += [
            f"| {DATASET_NAMES.get(f['dataset'], f['dataset'])} | `{_cell(f['item_id'])}` | "
            f"{_cell(f['event_id'] or '–')} | {f['score']:.3f} |"
            for f in report["flagged"]
        ]
    else:
        lines.append("No item was flagged.")
    return "\n".join(lines) + "\n"
