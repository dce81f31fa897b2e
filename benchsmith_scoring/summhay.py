"""SummHay scoring: summaries split into numbered bullets, judge verdicts, and SummHay's scores.

Everything follows SummHay's released code (salesforce/summary-of-a-haystack):

- **Bullets** (``populate_summaries.py``, ``bullet_processor``): the summary is split on ``\\n``,
  each line stripped, empty lines dropped; every remaining line is a bullet, headers included,
  numbered from 1 (``populate_eval.py``, ``evaluate_insights``).
- **Citations** (``utils_eval.py``, ``extract_citations``): square brackets holding only digits,
  commas and spaces (``[3]``, ``[3, 14]``, ``[3][14]``); each comma-separated part is a document
  number, the document's 1-based position in the haystack (``build_ref_insight2docids``), as the
  summarization prompt labels the documents. ``[D03]`` or ``[Doc 3]`` cite nothing; such
  brackets are counted as *unread* so a summarizer that cites in another form shows up.
- **Per insight** (``compute_single_sample_scores``): coverage 1 (full), 0.5 (partial) or 0; for a
  covered insight, precision, recall and F1 between the numbers cited by the covering bullet and
  the insight's gold documents; joint = coverage x F1 (0 when not covered).
- **Aggregate** (``compute_full_results``, ``compute_2d_rag_results``): Coverage and Joint are
  means over every insight, Citation (and its precision and recall) over every covered insight,
  pooled across summaries: :func:`summarize_scores` over all insight scores of a system.

Where SummHay's paper and code part (``mode``): a covered insight whose judge named no bullet, or
a bullet that does not exist. ``paper`` scores its citation 0 and records the problem;
``reference_code`` does what the code does, reading ``bullets[int(bullet_id) - 1]`` with
``bullet_id`` -1 when it is not a number (Python's negative indexing: no bullet named reads the
second-to-last bullet, bullet 0 the last); an index past the end, where the code raises
IndexError, scores 0 with the problem recorded. Beyond SummHay: a *retrievable* citation recall
whose gold is limited to the documents that were in the context (RAG).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Literal

Coverage = Literal["full", "partial", "none"]
MetricMode = Literal["paper", "reference_code"]
COVERAGE_SCORE: dict[str, float] = {"full": 1.0, "partial": 0.5, "none": 0.0}

_CITATION = re.compile(r"\[([\d, ]+)\]")
"""What SummHay's parser reads: brackets of digits, commas and spaces only."""
_BRACKET = re.compile(r"\[([^\[\]]*)\]")
_MARKER = re.compile(r"^(?:[-*•‣–]|\d{1,3}[.)])\s+")


@dataclass(frozen=True)
class Bullet:
    """One bullet: its 1-based id, the line as SummHay keeps it, the text the judge is shown
    (list marker and citations removed), the document numbers cited, and how many bracketed
    spans with digits cite nothing SummHay reads (e.g. ``[D03]``)."""

    bullet_id: int
    line: str
    text: str
    citations: tuple[int, ...]
    unread: int = 0


def split_lines(summary: str) -> list[str]:
    """SummHay's bullets of a summary: its ``\\n``-separated lines, stripped, empty ones
    dropped."""
    return [line.strip() for line in summary.split("\n") if line.strip()]


def cited_numbers(line: str) -> list[int]:
    """The document numbers SummHay reads in ``line``, in order (repeats kept). A part its code
    cannot turn into a number (``[1 2]``, where it raises ValueError) is skipped."""
    numbers = []
    for match in _CITATION.findall(line):
        for part in match.split(","):
            if part.strip():
                try:
                    numbers.append(int(part))
                except ValueError:
                    continue
    return numbers


def unread_brackets(line: str) -> int:
    """Bracketed spans holding a digit from which SummHay reads no number (``[D03]``,
    ``[Doc 3]``, ``[1 2]``, ``[3-5]``)."""
    return sum(
        1
        for inner in _BRACKET.findall(line)
        if re.search(r"\d", inner) and not cited_numbers(f"[{inner}]")
    )


def make_bullet(bullet_id: int, line: str) -> Bullet:
    """The bullet ``bullet_id`` of one summary line."""
    line = line.strip()
    text = " ".join(_CITATION.sub("", _MARKER.sub("", line, count=1)).split())
    numbers = tuple(dict.fromkeys(cited_numbers(line)))
    return Bullet(bullet_id, line, text, numbers, unread_brackets(line))


def bullets_of(lines: Sequence[str]) -> list[Bullet]:
    """Bullets numbered as SummHay's judge numbers a summary's list of lines: line i is
    bullet i + 1."""
    return [make_bullet(i, line) for i, line in enumerate(lines, 1)]


def parse_summary(summary: str) -> list[Bullet]:
    """The bullets of ``summary``: every non-empty line, headers included (SummHay's rule)."""
    return bullets_of(split_lines(summary))


def document_numbers(document_ids: Sequence[str]) -> dict[str, int]:
    """Each document's citation number: its 1-based position in the haystack."""
    return {doc: n for n, doc in enumerate(document_ids, 1)}


@dataclass(frozen=True)
class Verdict:
    """The judge's verdict on one insight: coverage and the bullet that covers it (or None)."""

    insight_id: str
    coverage: Coverage
    bullet_id: int | None


@dataclass(frozen=True)
class InsightScore:
    """Scores of one insight; ``problem`` says what was wrong with a covering verdict's bullet."""

    insight_id: str
    coverage: float
    precision: float
    recall: float
    f1: float
    retrievable_recall: float | None
    problem: str = ""


def f1(precision: float, recall: float) -> float:
    """Harmonic mean, 0 when both are 0."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def covering_bullet(
    bullets: Sequence[Bullet], bullet_id: int | None, mode: MetricMode = "paper"
) -> tuple[Bullet | None, str]:
    """The bullet whose citations a covered insight is scored on, and the problem, if any."""
    n = len(bullets)
    if bullet_id is not None and 1 <= bullet_id <= n:
        return bullets[bullet_id - 1], ""
    named = "no bullet named" if bullet_id is None else f"bullet {bullet_id} does not exist"
    if mode == "paper":
        return None, f"covered, but {named}"
    index = (bullet_id if bullet_id is not None else -1) - 1
    if -n <= index < n:
        return bullets[index], f"covered, but {named}: SummHay's code reads bullets[{index}]"
    return None, f"covered, but {named}: SummHay's code raises IndexError"


def score_insights(
    verdicts: Sequence[Verdict],
    bullets: Sequence[Bullet],
    gold: Mapping[str, set[str]],
    document_ids: Sequence[str],
    context_ids: set[str] | None = None,
    mode: MetricMode = "paper",
) -> list[InsightScore]:
    """Score each insight of one subtopic summary. ``gold`` maps insight to its documents,
    ``document_ids`` are the haystack's documents in order (a citation is a position);
    ``context_ids`` are the documents the summarizer saw (RAG), for the retrievable recall."""
    number = document_numbers(document_ids)
    seen = {number[d] for d in context_ids if d in number} if context_ids is not None else None
    scores = []
    for v in verdicts:
        coverage = COVERAGE_SCORE[v.coverage]
        truth = {number[d] for d in gold.get(v.insight_id, set()) if d in number}
        reachable = truth & seen if seen is not None else truth
        if coverage == 0:
            scores.append(InsightScore(v.insight_id, 0.0, 0.0, 0.0, 0.0, None))
            continue
        bullet, problem = covering_bullet(bullets, v.bullet_id, mode)
        cited = set(bullet.citations) if bullet is not None else set()
        hits = len(cited & truth)
        precision = hits / len(cited) if cited else 0.0
        recall = hits / len(truth) if truth else 0.0
        retrievable = len(cited & reachable) / len(reachable) if reachable else None
        scores.append(
            InsightScore(
                v.insight_id,
                coverage,
                precision,
                recall,
                f1(precision, recall),
                retrievable,
                problem,
            )
        )
    return scores


def _percent(values: Sequence[float]) -> float | None:
    """100 x the mean; ``None`` for no values (SummHay's ``np.mean([])`` is NaN)."""
    return 100 * fmean(values) if values else None


def summarize_scores(scores: Sequence[InsightScore]) -> dict[str, float | int | None]:
    """SummHay's Coverage, Citation and Joint (x100) over ``scores``, with citation precision and
    recall over covered insights, the retrievable recall and the counts behind them. Given one
    summary's insights it is that summary's score; given every insight of a system, SummHay's
    pooled figure. A mean over nothing is ``None``."""
    covered = [s for s in scores if s.coverage > 0]
    reachable = [s.retrievable_recall for s in covered if s.retrievable_recall is not None]
    return {
        "insights_scored": len(scores),
        "covered": len(covered),
        "coverage": _percent([s.coverage for s in scores]),
        "citation": _percent([s.f1 for s in covered]),
        "joint": _percent([s.coverage * s.f1 for s in scores]),
        "citation_precision": _percent([s.precision for s in covered]),
        "citation_recall": _percent([s.recall for s in covered]),
        "retrievable_citation_recall": _percent(reachable),
        "citation_problems": sum(1 for s in scores if s.problem),
    }


def numbered_documents(documents: Iterable[tuple[int, str]]) -> str:
    """Documents as the summarizer is shown them: ``Document N:`` (the number citations use,
    the document's haystack position) above each text, a blank line between documents."""
    return "\n\n".join(f"Document {n}:\n{text}" for n, text in documents)


_VERDICT = re.compile(r"\{.*?\}", re.DOTALL)


def read_verdict(coverage: str, bullet_id: int | str | None) -> tuple[Coverage, int | None]:
    """A judge's coverage and bullet, normalised: coverage ``full``/``fully covered``,
    ``partial``/``partially covered`` or ``none``/``no``/``not covered`` in any case; the
    bullet a number, ``"3"``, ``"bullet 3"``, or ``"NA"``/``None`` for none. ValueError for an
    unknown coverage."""
    word = coverage.strip().lower()
    found: Coverage
    if word.startswith(("full", "yes", "covered")):
        found = "full"
    elif word.startswith("partial"):
        found = "partial"
    elif word.startswith(("no", "not", "none")):
        found = "none"
    else:
        raise ValueError(f"unknown coverage {coverage!r}")
    if isinstance(bullet_id, str):
        digits = re.search(r"\d+", bullet_id)
        bullet_id = int(digits.group()) if digits else None
    return found, bullet_id


def parse_verdict(answer: str) -> tuple[Coverage, int | None]:
    """The first JSON object in a judge's answer, read by :func:`read_verdict` (ValueError when
    there is none or it has no ``coverage``)."""
    for match in _VERDICT.finditer(answer):
        try:
            data = json.loads(match.group())
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and isinstance(data.get("coverage"), str):
            return read_verdict(data["coverage"], data.get("bullet_id"))
    raise ValueError(f"no JSON verdict with a coverage in {answer[:200]!r}")
