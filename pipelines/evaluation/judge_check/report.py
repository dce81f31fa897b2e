"""The judge check's report: written as JSON, or printed as rich tables (the summary, per-label
scores, the confusion matrix and the first failed judge answers; for the rubric judges the
summary, the agreement per dimension with notes on undefined figures, and the failed answers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pipelines.outputs import write_json_atomic


def write_report(path: Path, report: dict[str, Any]) -> None:
    """Write ``report`` as JSON atomically."""
    write_json_atomic(path, report)


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _head(report: dict[str, Any]) -> Table:
    """The summary: file, counts, accuracy and kappa (and SummHay's linking and scores)."""
    head = Table(title=f"judge-check {report['judge']} ({report['backend']}, {report['model']})")
    head.add_column("measure")
    head.add_column("value", justify="right")
    head.add_row("file", f"{report['file']} ({report['format']})")
    head.add_row("verdicts", str(report["items"]))
    if report["skipped"]:
        head.add_row("  skipped (other judges)", str(report["skipped"]))
    head.add_row("answered", str(report["answered"]))
    head.add_row("failed", str(report["failed"]))
    head.add_row("accuracy", _number(report["accuracy"]))
    head.add_row("Cohen's kappa", _number(report["kappa"]))
    if linking := report.get("linking"):
        head.add_row(
            "linking accuracy",
            f"{_number(linking['accuracy'])} ({linking['agree']}/{linking['compared']})",
        )
        head.add_row("coverage correlation (Pearson)", _number(report["coverage_pearson"]))
        head.add_row("coverage bias (judge - human)", _number(report["coverage_bias"]))
    return head


def _per_label(report: dict[str, Any]) -> Table:
    """Counts, precision, recall and F1 of every label."""
    per_label = Table(title="per label")
    for name in ("label", "human", "judge", "precision", "recall", "F1"):
        per_label.add_column(name, justify="left" if name == "label" else "right")
    for label, s in report["labels"].items():
        per_label.add_row(
            label,
            str(s["human"]),
            str(s["judge"]),
            _number(s["precision"]),
            _number(s["recall"]),
            _number(s["f1"]),
        )
    return per_label


def _confusion(report: dict[str, Any]) -> Table:
    """The confusion matrix, rows human, columns judge."""
    confusion = report["confusion"]
    matrix = Table(title="confusion (rows: human, columns: judge)")
    matrix.add_column("human \\ judge")
    for label in confusion["labels"]:
        matrix.add_column(label, justify="right")
    for label, counts in zip(confusion["labels"], confusion["matrix"], strict=True):
        matrix.add_row(label, *map(str, counts))
    return matrix


def _rubric_head(report: dict[str, Any]) -> Table:
    """The summary of a rubric check: file, labels, articles, judge calls and failures."""
    head = Table(title=f"judge-check {report['judge']} ({report['backend']}, {report['model']})")
    head.add_column("measure")
    head.add_column("value", justify="right")
    head.add_row("file", f"{report['file']} ({report['format']})")
    head.add_row("labels", str(report["items"]))
    if report["skipped"]:
        head.add_row("  skipped (other judges)", str(report["skipped"]))
    head.add_row("articles", str(report["articles"]))
    head.add_row("judge calls", str(report["judge_calls"]))
    head.add_row("answered", str(report["answered"]))
    head.add_row("failed", str(report["failed"]))
    return head


def _per_dimension(report: dict[str, Any]) -> Table:
    """Per dimension: its scale, labels answered and failed, and the agreement figures."""
    table = Table(
        title="per dimension (failed judge answers left out)",
        caption="±1: at most a point apart (within one); rho: Spearman's; QWK: quadratic-weighted "
        "kappa; bias: mean judge minus human score",
    )
    table.add_column("dimension", no_wrap=True)
    for name in ("scale", "n", "failed", "exact", "±1", "rho", "QWK", "bias"):
        table.add_column(name, justify="right", no_wrap=True)
    for dim, s in report["dimensions"].items():
        table.add_row(
            dim,
            "{}-{}".format(*s["scale"]),
            str(s["n"]),
            str(s["failed"]),
            _number(s["exact"]),
            _number(s["within_one"]),
            _number(s["spearman"]),
            _number(s["quadratic_kappa"]),
            _number(s["bias"]),
        )
    return table


def _notes(report: dict[str, Any]) -> list[str]:
    """Why a dimension's figure is n/a."""
    return [f"{dim}: {note}" for dim, s in report["dimensions"].items() for note in s["notes"]]


def _failures(failures: list[dict[str, Any]], shown: int) -> Table:
    """The first ``shown`` failed judge answers with their reasons."""
    failed = Table(title=f"failed judge answers ({len(failures)})")
    failed.add_column("verdict")
    failed.add_column("reason")
    for f in failures[:shown]:
        where = ", ".join([f["where"]] + [f["dimension"]] * ("dimension" in f))
        failed.add_row(f"{f['id']} ({where})", f["reason"])
    if len(failures) > shown:
        failed.add_row(f"... and {len(failures) - shown} more", "")
    return failed


def print_report(report: dict[str, Any], console: Console, failures_shown: int = 10) -> None:
    """The report as rich tables: the summary, per-label scores, the confusion matrix, and the
    first failed judge answers with their reasons (rubric scores: the summary, the agreement
    per dimension and its notes, and the failed answers)."""
    if "dimensions" in report:
        console.print(_rubric_head(report))
        console.print(_per_dimension(report))
        for note in _notes(report):
            console.print(f"note: {note}")
    else:
        console.print(_head(report))
        console.print(_per_label(report))
        console.print(_confusion(report))
    if report["failures"]:
        console.print(_failures(report["failures"], failures_shown))
