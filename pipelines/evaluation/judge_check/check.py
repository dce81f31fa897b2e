"""The judge check itself: ask the configured judge every labelled verdict, exactly as its metric
asks it, and report the agreement; failed answers are listed with their reason and left out of
the agreement, never silently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders.summhay import eval_responders
from builders.wikigen import responders as wikigen_responders
from pipelines.evaluation.judge_check.agreement import agreement, coverage_extras, failures
from pipelines.evaluation.judge_check.labels import read_labels
from pipelines.evaluation.judge_check.verdicts import LABELS, LabelFile, Labelled, report_head
from pipelines.evaluation.judge_check.wikigen_rubric import run_rubric_check
from pipelines.evaluation.wikigen import EntailsAnswer
from pipelines.llm import LLMClient, LLMSettings, Outcome


def judge_client(llm: LLMSettings) -> LLMClient:
    """The configured client; the ``template`` backend answers with the baselines' judges."""
    responders = eval_responders.responders() | wikigen_responders.responders()
    return LLMClient.from_settings(llm, responders=responders)


def _judged(value: Any) -> tuple[str, int | None]:
    """The label (and bullet) of a validated judge answer."""
    if isinstance(value, EntailsAnswer):
        return ("entails" if value.entails else "not_entails"), None
    coverage, bullet = value.normalized()
    return coverage, bullet


def _row(item: Labelled, outcome: Outcome[Any], judge: str) -> dict[str, Any]:
    """One verdict of the report: the human's label and the judge's (or why it failed)."""
    coverage = judge == "summhay-coverage"
    row: dict[str, Any] = {"id": item.item_id, "where": item.where, "label": item.label}
    if coverage:
        row |= {"human_linked": item.linked, "bullet_id": item.bullet}
    if outcome.ok:
        judged, bullet = _judged(outcome.value)
        row |= {"status": "ok", "judge_label": judged, "reason": ""}
    else:
        row |= {"status": "failed", "judge_label": None, "reason": outcome.error}
        bullet = None
    if coverage:
        row["judge_bullet_id"] = bullet
    return row


def run_check(labels: LabelFile, client: LLMClient) -> dict[str, Any]:
    """Ask the judge every verdict of ``labels``; the report as a JSON-ready dict."""
    if labels.judge == "wikigen-rubric":
        return run_rubric_check(labels, client)
    outcomes = client.ask_many(
        (i.ask for i in labels.items), f"judge-check: {labels.judge}", len(labels.items)
    )
    rows = [
        _row(item, outcome, labels.judge)
        for item, outcome in zip(labels.items, outcomes, strict=True)
    ]
    answered = [r for r in rows if r["status"] == "ok"]
    llm = client.stats()
    report: dict[str, Any] = {
        **report_head(labels, llm, len(rows)),
        "answered": len(answered),
        "failed": len(rows) - len(answered),
        **agreement(
            [r["label"] for r in answered],
            [r["judge_label"] for r in answered],
            LABELS[labels.judge],
        ),
        **failures(rows),
    }
    if labels.judge == "summhay-coverage":
        report |= coverage_extras(rows)
    report["llm"] = llm
    report["verdicts"] = rows
    return report


def check_file(path: Path, llm: LLMSettings, judge: str | None = None) -> dict[str, Any]:
    """Read ``path`` and check the configured judge against its labels."""
    labels = read_labels(path, judge)
    return run_check(labels, judge_client(llm))
