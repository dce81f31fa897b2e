"""SummHay's released annotations (``data/eval_benchmark_data.json`` of
salesforce/summary-of-a-haystack: 200 summaries, 1,419 insight labels): one JSON array whose
elements each hold

- ``summkey`` (the summarizer, e.g. ``summary_subtopic_oracle_gpt3.5``), ``subtopic_id``,
  ``subtopic``, ``topic`` and ``topic_id`` or ``topic_fn`` (only ``summkey`` is read, for ids);
- ``summary``: the summary as a list of lines; SummHay's judge numbers line ``i`` as bullet
  ``i + 1``;
- ``reference_insights``: ``[{"insight_id", "insight_name", "insight", "query"?}]``;
- ``annotation``: the human labels, ``[{"insight_id", "coverage", "candidate_id"}]`` with
  ``coverage`` one of ``fully_covered``, ``partially_covered``, ``not_covered`` and
  ``candidate_id`` the covering line as a 0-based index into ``summary`` (a string, e.g. ``"2"``)
  or ``"no_selection"``;
- ``predictions_<prompt>_<model>``: SummHay's own judges' answers (``{"insight_id", "coverage":
  "FULL_COVERAGE" | "PARTIAL_COVERAGE" | "NO_COVERAGE", "bullet_id": 1-based | "NA"}``), not read.

The file has no citation labels: citations are checked through the covering bullet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipelines.evaluation.judge_check.verdicts import (
    LabelFile,
    LabelFileError,
    Labelled,
    coverage_item,
    coverage_label,
    parse_json,
    summary_bullets,
)


def _field(data: object, key: str, kind: type, where: str) -> Any:
    """``data[key]`` when ``data`` is an object and the value a ``kind``; ValueError otherwise."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
    value = data.get(key)
    if not isinstance(value, kind):
        got = "missing" if key not in data else f"got {type(value).__name__}"
        raise ValueError(f"{where}: '{key}' must be a {kind.__name__} ({got})")
    return value


def _covering_line(candidate: Any, lines: list[str], at: str) -> int | None:
    """The 1-based line a human named as covering (``candidate_id``: a 0-based index), or None
    for ``no_selection``; ValueError for no line of the summary."""
    if candidate in ("no_selection", None, ""):
        return None
    try:
        line = int(candidate) + 1
    except (TypeError, ValueError):
        line = 0
    if not 1 <= line <= len(lines):
        raise ValueError(
            f"{at}: candidate_id {candidate!r} is no line of the summary (0 to "
            f"{len(lines) - 1}, or 'no_selection')"
        )
    return line


def _summhay_sample(sample: object, k: int) -> list[Labelled]:
    """The verdicts of element ``k`` of SummHay's annotation file; ValueError names the part."""
    where = f"element [{k}]"
    lines = _field(sample, "summary", list, where)
    if not all(isinstance(s, str) for s in lines):
        raise ValueError(f"{where}: 'summary' must be a list of strings")
    assert isinstance(sample, dict)
    key = sample.get("summkey") or f"[{k}]"
    insights: dict[str, str] = {}
    for n, insight in enumerate(_field(sample, "reference_insights", list, where)):
        at = f"{where} reference_insights[{n}]"
        insights[_field(insight, "insight_id", str, at)] = _field(insight, "insight", str, at)
    parsed = summary_bullets(lines)
    items = []
    for n, label in enumerate(_field(sample, "annotation", list, where)):
        at = f"{where} annotation[{n}]"
        insight_id = _field(label, "insight_id", str, at)
        if insight_id not in insights:
            raise ValueError(f"{at}: insight {insight_id!r} is not in reference_insights")
        try:
            coverage = coverage_label(label.get("coverage"))
        except ValueError as exc:
            raise ValueError(f"{at}: coverage: {exc}") from None
        line = _covering_line(label.get("candidate_id", "no_selection"), lines, at)
        item_id = f"{key}:{insight_id}"
        items.append(coverage_item(item_id, at, coverage, parsed, insights[insight_id], line))
    return items


def read_summhay(path: Path, text: str, judge: str | None) -> LabelFile:
    """The coverage verdicts of SummHay's annotation file ``text``."""
    if judge not in (None, "summhay-coverage"):
        raise LabelFileError(
            f"{path}: SummHay's annotation file holds coverage verdicts only (summhay-coverage), "
            f"not {judge}"
        )
    data = parse_json(path, text)
    if not isinstance(data, list):
        raise LabelFileError(f"{path}: expected a JSON array of annotated summaries")
    try:
        items = [item for k, sample in enumerate(data) for item in _summhay_sample(sample, k)]
    except ValueError as exc:
        raise LabelFileError(f"{path}: {exc}") from None
    return LabelFile(path, "summhay", "summhay-coverage", items)
