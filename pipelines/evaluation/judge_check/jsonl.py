"""benchsmith's JSONL of labelled verdicts: one verdict per line (blank lines are skipped)::

    {"id": "s1-i3", "judge": "summhay-coverage",
     "inputs": {"summary": ["- Prices rose 4% [D2]", "- ..."], "insight": "..."},
     "label": "full", "bullet_id": 1}
    {"id": "c7", "judge": "wikigen-entails",
     "inputs": {"premise": "the cited document", "claim": "the sentence"}, "label": true}
    {"id": "a2-focus", "judge": "wikigen-rubric",
     "inputs": {"title": "2023 Porto floods", "article": "==Background==\n...",
                "outline": ["Background", "Impact"]},
     "dimension": "focus", "label": 4}

``id`` (string or number) is optional, ``line N`` otherwise. For ``summhay-coverage``,
``inputs.summary`` is a list of lines or one string (its non-empty lines), ``label`` is ``full``,
``partial`` or ``none`` (SummHay's spellings are accepted too) and the optional ``bullet_id`` is
the 1-based number of the covering line (SummHay's numbering), ``null`` or absent when none. For
``wikigen-entails``, ``label`` is ``true`` or ``false``. For ``wikigen-rubric``, ``dimension``
is one of WikiGenBench's judged scores (``SCORES``: fluency, info, outline, organization,
focus, coverage) and ``label`` the human's whole-number score on its scale (``BOUNDS``: 0-5 for
the first three, 1-5 for Prometheus' three); ``inputs.outline``, the planned headings, is
optional (the Outline judge reads the article's own ``==Heading==`` lines without it). Other
keys are errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError

from benchsmith_scoring import wikigen_judges as paper
from benchsmith_scoring.summhay import split_lines
from pipelines.evaluation.judge_check.verdicts import (
    JUDGES,
    JudgeName,
    LabelFile,
    LabelFileError,
    Labelled,
    Scored,
    coverage_item,
    coverage_label,
    parse_json,
    summary_bullets,
)
from pipelines.evaluation.wikigen import entails_ask
from pipelines.evaluation.wikigen_judges import Judged


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: StrictStr | StrictInt | None = None
    judge: JudgeName
    inputs: dict[str, Any]
    label: Any
    """Checked by the judge's reader: a string, a boolean or a score."""
    bullet_id: StrictInt | None = None
    dimension: StrictStr | None = None


class _CoverageInputs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    summary: list[StrictStr] | StrictStr
    insight: StrictStr


class _EntailsInputs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    premise: StrictStr
    claim: StrictStr


class _ArticleInputs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: StrictStr
    article: StrictStr
    outline: list[StrictStr] | None = None


def _problem(exc: ValidationError, prefix: str = "") -> str:
    """The first pydantic error as ``key.path: message``."""
    err = exc.errors()[0]
    where = ".".join([prefix] * bool(prefix) + [str(p) for p in err["loc"]])
    message = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        message = "unknown key"
    elif err["type"] == "missing":
        message = "required key is missing"
    elif "input" in err:
        message = f"{message} (got {err['input']!r})"
    return f"{where}: {message}" if where else message


def _entails_item(line: _Line, where: str, item_id: str) -> Labelled:
    """The ``wikigen-entails`` verdict of one valid line; ValueError names what is wrong."""
    try:
        inputs = _EntailsInputs.model_validate(line.inputs)
    except ValidationError as exc:
        raise ValueError(_problem(exc, "inputs")) from None
    if not isinstance(line.label, bool):
        raise ValueError(f"label: expected true or false (got {line.label!r})")
    if line.bullet_id is not None:
        raise ValueError("bullet_id: only summhay-coverage verdicts name a bullet")
    label = "entails" if line.label else "not_entails"
    return Labelled(item_id, where, label, entails_ask(inputs.premise, inputs.claim))


def _rubric_item(line: _Line, where: str, item_id: str) -> Scored:
    """The ``wikigen-rubric`` score of one valid line; ValueError names what is wrong."""
    try:
        inputs = _ArticleInputs.model_validate(line.inputs)
    except ValidationError as exc:
        raise ValueError(_problem(exc, "inputs")) from None
    if line.bullet_id is not None:
        raise ValueError("bullet_id: only summhay-coverage verdicts name a bullet")
    if line.dimension is None:
        raise ValueError(f"dimension: required key is missing (one of {', '.join(paper.SCORES)})")
    if line.dimension not in paper.SCORES:
        raise ValueError(
            f"dimension: unknown dimension {line.dimension!r}; one of {', '.join(paper.SCORES)}"
        )
    low, high = paper.BOUNDS[line.dimension]
    try:
        label = paper.checked("label", line.label, (low, high))
    except paper.ScoreError:
        raise ValueError(
            f"label: expected a whole number from {low} to {high} for {line.dimension} "
            f"(got {line.label!r})"
        ) from None
    outline = tuple(inputs.outline) if inputs.outline is not None else None
    article = Judged(inputs.title, inputs.article, outline)
    return Scored(item_id, where, line.dimension, label, article)


def _jsonl_item(line: _Line, where: str, item_id: str) -> Labelled | Scored:
    """The verdict of one valid JSONL line; ValueError names what is wrong."""
    if line.judge == "wikigen-rubric":
        return _rubric_item(line, where, item_id)
    if line.dimension is not None:
        raise ValueError("dimension: only wikigen-rubric labels name a dimension")
    if line.judge == "wikigen-entails":
        return _entails_item(line, where, item_id)
    try:
        coverage = _CoverageInputs.model_validate(line.inputs)
    except ValidationError as exc:
        raise ValueError(_problem(exc, "inputs")) from None
    try:
        label = coverage_label(line.label)
    except ValueError as exc:
        raise ValueError(f"label: {exc}") from None
    lines = coverage.summary
    if isinstance(lines, str):
        lines = split_lines(lines)
    if line.bullet_id is not None and not 1 <= line.bullet_id <= len(lines):
        raise ValueError(f"bullet_id {line.bullet_id}: the summary has {len(lines)} lines")
    parsed = summary_bullets(lines)
    return coverage_item(item_id, where, label, parsed, coverage.insight, line.bullet_id)


def _lines(path: Path, text: str) -> list[tuple[int, _Line]]:
    """Every non-blank line, validated, with its number."""
    parsed: list[tuple[int, _Line]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        data = parse_json(path, raw, n)
        if not isinstance(data, dict):
            raise LabelFileError(f"{path}:{n}: expected a JSON object, got {type(data).__name__}")
        try:
            parsed.append((n, _Line.model_validate(data)))
        except ValidationError as exc:
            raise LabelFileError(f"{path}:{n}: {_problem(exc)}") from None
    return parsed


def read_jsonl(path: Path, text: str, judge: str | None) -> LabelFile:
    """The verdicts of ``judge`` (by default the file's only one) in the JSONL ``text``."""
    parsed = _lines(path, text)
    found = sorted({line.judge for _, line in parsed})
    if judge is None:
        if len(found) > 1:
            raise LabelFileError(
                f"{path}: holds verdicts of several judges ({', '.join(found)}); pick one with "
                "--judge"
            )
        judge = found[0] if found else JUDGES[0]
    items: list[Any] = []
    for n, line in parsed:
        if line.judge != judge:
            continue
        item_id = str(line.id) if line.id is not None else f"line {n}"
        try:
            items.append(_jsonl_item(line, f"line {n}", item_id))
        except ValueError as exc:
            raise LabelFileError(f"{path}:{n}: {exc}") from None
    return LabelFile(path, "jsonl", judge, items, skipped=len(parsed) - len(items))
