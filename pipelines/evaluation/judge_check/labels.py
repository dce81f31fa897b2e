"""Reading labelled verdicts. Two file formats are read, told apart by their first character:
``[`` for SummHay's released annotations (:mod:`.summhay_file`), ``{`` for benchsmith's JSONL
(:mod:`.jsonl`).

In both formats the judge sees the summary as the metric shows it
(:func:`benchsmith_scoring.summhay.bullets_of`): line ``i`` of the list is bullet ``i + 1``, as
SummHay numbers it, headings included, shown without its list marker and citations. A human
link to a line is compared with that line's bullet.
"""

from __future__ import annotations

from pathlib import Path

from pipelines.errors import MissingInputError
from pipelines.evaluation.judge_check.jsonl import read_jsonl
from pipelines.evaluation.judge_check.summhay_file import read_summhay
from pipelines.evaluation.judge_check.verdicts import JUDGES, LabelFile, LabelFileError


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
    reader = read_summhay if start == "[" else read_jsonl
    labels = reader(path, text, judge)
    if not labels.items:
        raise LabelFileError(f"{path}: no verdicts of {labels.judge}")
    return labels
