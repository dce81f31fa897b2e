"""Human verdicts as the judge check holds them: the judges and their labels, one verdict with
the judge's ask that checks it (or one human score of an article, for the WikiGenBench rubric
judges), the verdicts of one file, and what both file formats share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from benchsmith_scoring.summhay import Bullet, bullets_of
from builders.summhay.answers import JudgeAnswer
from pipelines.errors import BenchsmithError
from pipelines.evaluation.summhay import judge_ask
from pipelines.evaluation.wikigen_judges import Judged
from pipelines.llm import Ask

JudgeName = Literal["summhay-coverage", "wikigen-entails", "wikigen-rubric"]
JUDGES: tuple[str, ...] = get_args(JudgeName)
LABELS: dict[str, tuple[str, ...]] = {
    "summhay-coverage": ("full", "partial", "none"),
    "wikigen-entails": ("entails", "not_entails"),
}
"""Each categorical judge's labels, in the order of the report's tables (``wikigen-rubric``
labels are scores on each dimension's scale, ``BOUNDS`` of
:mod:`benchsmith_scoring.wikigen_judges`)."""


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
class Scored:
    """One human score of an article on one WikiGenBench dimension (``wikigen-rubric``)."""

    item_id: str
    where: str
    dimension: str
    """``fluency``, ``info``, ``outline``, ``organization``, ``focus`` or ``coverage``."""
    label: int
    """The human's score, within the dimension's scale."""
    article: Judged
    """What the judges read: the title, the article and its outline (a tuple, or ``None`` for
    the article's own headings)."""


@dataclass(frozen=True)
class LabelFile:
    """The verdicts of one judge read from one file."""

    path: Path
    format: str
    judge: str
    items: Sequence[Labelled] | Sequence[Scored]
    skipped: int = 0
    """Lines of other judges, left out."""


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


def coverage_item(
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


def parse_json(path: Path, text: str, line: int | None = None) -> Any:
    """``text`` parsed as JSON; an error names the file and line (``line``: the line ``text``
    is, in a JSONL file)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise LabelFileError(
            f"{path}:{where}: not valid JSON: {exc.msg} (column {exc.colno})"
        ) from None


def report_head(labels: LabelFile, llm: dict[str, Any], rows: int) -> dict[str, Any]:
    """The first keys of every judge check's report: the file, its judge, the model asked and
    how many labels were read (``rows``) and skipped."""
    return {
        "file": str(labels.path),
        "format": labels.format,
        "judge": labels.judge,
        "backend": llm["backend"],
        "model": llm["model"],
        "items": rows,
        "skipped": labels.skipped,
    }
