"""Agreement of the configured judge with human-labelled verdicts (``benchsmith judge-check``).

Each judge is asked exactly as its metric asks it, through the ``llm`` settings, with the same
prompt, answer model and rule:

- ``summhay-coverage`` (:func:`pipelines.evaluation.summhay.judge_ask`): a summary's bullets and
  one reference insight; the judge answers full, partial or none and the covering bullet.
- ``wikigen-entails`` (:func:`pipelines.evaluation.wikigen.entails_ask`): a cited document and one
  sentence; the judge answers whether the document entails the sentence.

The report has accuracy and Cohen's kappa over the answered verdicts, precision, recall, F1 and
counts per label, the confusion matrix (rows human, columns judge), and every failed judge answer
with its reason (failed answers are left out of the agreement, never silently). For SummHay it
also has *linking*, the share of verdicts where judge and human name the same covering bullet
(the citation score reads that bullet's citations), and the instance-level Pearson correlation
of the coverage scores (full 1, partial 0.5, none 0) and the judge's mean bias, as SummHay's
judge benchmark reports them.

Two file formats are read, told apart by their first character (``[`` or ``{``):

**SummHay's released annotations** (``data/eval_benchmark_data.json`` of
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

**benchsmith's JSONL**: one verdict per line (blank lines are skipped)::

    {"id": "s1-i3", "judge": "summhay-coverage",
     "inputs": {"summary": ["- Prices rose 4% [D2]", "- ..."], "insight": "..."},
     "label": "full", "bullet_id": 1}
    {"id": "c7", "judge": "wikigen-entails",
     "inputs": {"premise": "the cited document", "claim": "the sentence"}, "label": true}

``id`` (string or number) is optional, ``line N`` otherwise. For ``summhay-coverage``,
``inputs.summary`` is a list of lines or one string (its non-empty lines), ``label`` is ``full``,
``partial`` or ``none`` (SummHay's spellings are accepted too) and the optional ``bullet_id`` is
the 1-based number of the covering line (SummHay's numbering), ``null`` or absent when none. For
``wikigen-entails``, ``label`` is ``true`` or ``false``. Other keys are errors.

In both formats the judge sees the summary as the metric shows it
(:func:`benchsmith_scoring.summhay.bullets_of`): line ``i`` of the list is bullet ``i + 1``, as
SummHay numbers it, headings included, shown without its list marker and citations. A human
link to a line is compared with that line's bullet.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import StatisticsError, correlation, fmean
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, ValidationError
from rich.console import Console
from rich.table import Table

from benchsmith_scoring.summhay import COVERAGE_SCORE, Bullet, bullets_of, split_lines
from builders.summhay import eval_responders
from builders.summhay.answers import JudgeAnswer
from builders.wikigen import responders as wikigen_responders
from pipelines.errors import BenchsmithError, MissingInputError
from pipelines.evaluation.summhay import judge_ask
from pipelines.evaluation.wikigen import EntailsAnswer, entails_ask
from pipelines.llm import Ask, LLMClient, LLMSettings
from pipelines.outputs import write_json_atomic

JudgeName = Literal["summhay-coverage", "wikigen-entails"]
JUDGES: tuple[str, ...] = get_args(JudgeName)
LABELS: dict[str, tuple[str, ...]] = {
    "summhay-coverage": ("full", "partial", "none"),
    "wikigen-entails": ("entails", "not_entails"),
}
"""Each judge's labels, in the order of the report's tables."""


class LabelFileError(BenchsmithError):
    """A labelled-verdicts file cannot be read; the message names the file and line or item."""


@dataclass(frozen=True)
class Labelled:
    """One human verdict and the judge's ask that checks it."""

    item_id: str
    where: str
    label: str
    ask: Ask[Any]
    linked: bool = False
    """Whether the human named a covering line (SummHay)."""
    bullet: int | None = None
    """The bullet of that line, as the judge is shown it (``None`` when no line was named)."""


@dataclass(frozen=True)
class LabelFile:
    """The verdicts of one judge read from one file."""

    path: Path
    format: str
    judge: str
    items: list[Labelled]
    skipped: int = 0
    """Lines of other judges, left out."""


# ---- reading -------------------------------------------------------------------------------


def coverage_label(value: object) -> str:
    """``full``, ``partial`` or ``none`` from any spelling the judge accepts (SummHay's
    ``fully_covered`` and ``FULL_COVERAGE`` too); ValueError otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected full, partial or none (got {value!r})")
    try:
        return JudgeAnswer(coverage=value).normalized()[0]
    except ValueError:
        raise ValueError(f"expected full, partial or none (got {value!r})") from None


def summary_bullets(lines: Sequence[str]) -> tuple[list[Bullet], dict[int, int]]:
    """The bullets the metric numbers in ``lines`` (every line, as SummHay's judge does), and
    the bullet id of each 1-based line number (the same number)."""
    bullets = bullets_of(lines)
    return bullets, {b.bullet_id: b.bullet_id for b in bullets}


def _coverage_item(
    item_id: str,
    where: str,
    label: str,
    parsed: tuple[list[Bullet], dict[int, int]],
    insight: str,
    line: int | None,
) -> Labelled:
    """A coverage verdict on a parsed summary (:func:`summary_bullets`); ``line`` is the
    1-based line the human named as covering, if any."""
    bullets, of_line = parsed
    return Labelled(
        item_id,
        where,
        label,
        judge_ask(bullets, insight),
        linked=line is not None,
        bullet=of_line.get(line) if line is not None else None,
    )


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: StrictStr | StrictInt | None = None
    judge: JudgeName
    inputs: dict[str, Any]
    label: StrictStr | StrictBool
    bullet_id: StrictInt | None = None


class _CoverageInputs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    summary: list[StrictStr] | StrictStr
    insight: StrictStr


class _EntailsInputs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    premise: StrictStr
    claim: StrictStr


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


def _jsonl_item(line: _Line, where: str, item_id: str) -> Labelled:
    """The verdict of one valid JSONL line; ValueError names what is wrong."""
    if line.judge == "wikigen-entails":
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
    return _coverage_item(item_id, where, label, parsed, coverage.insight, line.bullet_id)


def _json(path: Path, text: str, line: int | None = None) -> Any:
    """``text`` parsed as JSON; an error names the file and line (``line``: the line ``text``
    is, in a JSONL file)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise LabelFileError(
            f"{path}:{where}: not valid JSON: {exc.msg} (column {exc.colno})"
        ) from None


def _read_jsonl(path: Path, text: str, judge: str | None) -> LabelFile:
    parsed: list[tuple[int, _Line]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        data = _json(path, raw, n)
        if not isinstance(data, dict):
            raise LabelFileError(f"{path}:{n}: expected a JSON object, got {type(data).__name__}")
        try:
            parsed.append((n, _Line.model_validate(data)))
        except ValidationError as exc:
            raise LabelFileError(f"{path}:{n}: {_problem(exc)}") from None
    found = sorted({line.judge for _, line in parsed})
    if judge is None:
        if len(found) > 1:
            raise LabelFileError(
                f"{path}: holds verdicts of several judges ({', '.join(found)}); pick one with "
                "--judge"
            )
        judge = found[0] if found else JUDGES[0]
    items = []
    for n, line in parsed:
        if line.judge != judge:
            continue
        item_id = str(line.id) if line.id is not None else f"line {n}"
        try:
            items.append(_jsonl_item(line, f"line {n}", item_id))
        except ValueError as exc:
            raise LabelFileError(f"{path}:{n}: {exc}") from None
    return LabelFile(path, "jsonl", judge, items, skipped=len(parsed) - len(items))


def _field(data: object, key: str, kind: type, where: str) -> Any:
    """``data[key]`` when ``data`` is an object and the value a ``kind``; ValueError otherwise."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
    value = data.get(key)
    if not isinstance(value, kind):
        got = "missing" if key not in data else f"got {type(value).__name__}"
        raise ValueError(f"{where}: '{key}' must be a {kind.__name__} ({got})")
    return value


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
        candidate = label.get("candidate_id", "no_selection")
        line: int | None = None
        if candidate not in ("no_selection", None, ""):
            try:
                line = int(candidate) + 1
            except (TypeError, ValueError):
                line = 0
            if not 1 <= line <= len(lines):
                raise ValueError(
                    f"{at}: candidate_id {candidate!r} is no line of the summary (0 to "
                    f"{len(lines) - 1}, or 'no_selection')"
                )
        item_id = f"{key}:{insight_id}"
        items.append(_coverage_item(item_id, at, coverage, parsed, insights[insight_id], line))
    return items


def _read_summhay(path: Path, text: str, judge: str | None) -> LabelFile:
    if judge not in (None, "summhay-coverage"):
        raise LabelFileError(
            f"{path}: SummHay's annotation file holds coverage verdicts only (summhay-coverage), "
            f"not {judge}"
        )
    data = _json(path, text)
    if not isinstance(data, list):
        raise LabelFileError(f"{path}: expected a JSON array of annotated summaries")
    try:
        items = [item for k, sample in enumerate(data) for item in _summhay_sample(sample, k)]
    except ValueError as exc:
        raise LabelFileError(f"{path}: {exc}") from None
    return LabelFile(path, "summhay", "summhay-coverage", items)


def read_labels(path: Path, judge: str | None = None) -> LabelFile:
    """The verdicts of ``judge`` (by default: the file's only judge) in ``path``, in either
    format (see the module's docstring); :class:`LabelFileError` names file and line."""
    if judge is not None and judge not in JUDGES:
        raise LabelFileError(f"unknown judge {judge!r}; choose one of {', '.join(JUDGES)}")
    if not path.is_file():
        raise MissingInputError(f"missing {path} (the labelled verdicts)", path)
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise LabelFileError(f"{path}: not UTF-8 text ({exc.reason})") from None
    start = text.lstrip()[:1]
    reader = _read_summhay if start == "[" else _read_jsonl
    labels = reader(path, text, judge)
    if not labels.items:
        raise LabelFileError(f"{path}: no verdicts of {labels.judge}")
    return labels


# ---- agreement -----------------------------------------------------------------------------


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


def _judged(value: Any) -> tuple[str, int | None]:
    """The label (and bullet) of a validated judge answer."""
    if isinstance(value, EntailsAnswer):
        return ("entails" if value.entails else "not_entails"), None
    coverage, bullet = value.normalized()
    return coverage, bullet


def _coverage_extras(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
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


def judge_client(llm: LLMSettings) -> LLMClient:
    """The configured client; the ``template`` backend answers with the baselines' judges."""
    responders = eval_responders.responders() | wikigen_responders.responders()
    return LLMClient.from_settings(llm, responders=responders)


def run_check(labels: LabelFile, client: LLMClient) -> dict[str, Any]:
    """Ask the judge every verdict of ``labels``; the report as a JSON-ready dict."""
    outcomes = client.ask_many(
        (i.ask for i in labels.items), f"judge-check: {labels.judge}", len(labels.items)
    )
    rows: list[dict[str, Any]] = []
    for item, outcome in zip(labels.items, outcomes, strict=True):
        row: dict[str, Any] = {"id": item.item_id, "where": item.where, "label": item.label}
        if labels.judge == "summhay-coverage":
            row |= {"human_linked": item.linked, "bullet_id": item.bullet}
        if outcome.ok:
            judged, bullet = _judged(outcome.value)
            row |= {"status": "ok", "judge_label": judged, "reason": ""}
            if labels.judge == "summhay-coverage":
                row["judge_bullet_id"] = bullet
        else:
            row |= {"status": "failed", "judge_label": None, "reason": outcome.error}
            if labels.judge == "summhay-coverage":
                row["judge_bullet_id"] = None
        rows.append(row)
    answered = [r for r in rows if r["status"] == "ok"]
    llm = client.stats()
    report: dict[str, Any] = {
        "file": str(labels.path),
        "format": labels.format,
        "judge": labels.judge,
        "backend": llm["backend"],
        "model": llm["model"],
        "items": len(rows),
        "skipped": labels.skipped,
        "answered": len(answered),
        "failed": len(rows) - len(answered),
        **agreement(
            [r["label"] for r in answered],
            [r["judge_label"] for r in answered],
            LABELS[labels.judge],
        ),
        "failures": [
            {"id": r["id"], "where": r["where"], "reason": r["reason"]}
            for r in rows
            if r["status"] != "ok"
        ],
        "failure_reasons": dict(
            Counter(r["reason"].split(":", 1)[0] for r in rows if r["status"] != "ok")
        ),
    }
    if labels.judge == "summhay-coverage":
        report |= _coverage_extras(rows)
    report["llm"] = llm
    report["verdicts"] = rows
    return report


def check_file(path: Path, llm: LLMSettings, judge: str | None = None) -> dict[str, Any]:
    """Read ``path`` and check the configured judge against its labels."""
    labels = read_labels(path, judge)
    return run_check(labels, judge_client(llm))


# ---- output --------------------------------------------------------------------------------


def write_report(path: Path, report: dict[str, Any]) -> None:
    """Write ``report`` as JSON atomically."""
    write_json_atomic(path, report)


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def print_report(report: dict[str, Any], console: Console, failures_shown: int = 10) -> None:
    """The report as rich tables: the summary, per-label scores, the confusion matrix, and the
    first failed judge answers with their reasons."""
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
    console.print(head)
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
    console.print(per_label)
    confusion = report["confusion"]
    matrix = Table(title="confusion (rows: human, columns: judge)")
    matrix.add_column("human \\ judge")
    for label in confusion["labels"]:
        matrix.add_column(label, justify="right")
    for label, counts in zip(confusion["labels"], confusion["matrix"], strict=True):
        matrix.add_row(label, *map(str, counts))
    console.print(matrix)
    failures = report["failures"]
    if failures:
        failed = Table(title=f"failed judge answers ({len(failures)})")
        failed.add_column("verdict")
        failed.add_column("reason")
        for f in failures[:failures_shown]:
            failed.add_row(f"{f['id']} ({f['where']})", f["reason"])
        if len(failures) > failures_shown:
            failed.add_row(f"... and {len(failures) - failures_shown} more", "")
        console.print(failed)
