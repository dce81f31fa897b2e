"""WikiGenBench's writing and informativeness judges: what they are asked and how their answers
are read. The toolkit's ``wikigen_baselines`` stage and the shipped harness task render the same
prompt files (``prompts/wikigen/``) with :func:`judge_variables` and read answers with the same
readers, so a score is the same number on either side.

WikiGenBench (Section 3, Appendix D) rates six things on a generated article:

- **Fluency** and **Info** (informativeness): one call with the Appendix D prompt, which also
  asks for Faithfulness; Faithfulness is not reported, as in the paper. Scores 0-5.
- **Outline**: the article's section headings with the Appendix D outline prompt. 0-5.
- **Organization**, **Focus** and **Coverage**: Prometheus 2's absolute grading (its
  ``ABSOLUTE_PROMPT_WO_REF`` format and system prompt, prometheus-eval), the instruction
  STORM's rubric grading gives ("You are a Wikipedia editor. ..."), the rubric of Appendix D,
  and **no reference answer**: STORM's ``eval/eval_prometheus_no_ref.prompt``, whose rubric
  WikiGenBench adopts, grades without one. Scores 1-5.

The paper reads answers with "regular expressions"; it does not print them. The readers here
are those of the prompts' own answer formats: ``Fluency: 4`` (also ``Fluency: Score 4``) for the
Fluency prompt, the first number for the Outline prompt, and prometheus-eval's
``_parse_output_absolute`` pattern (``[RESULT] 4`` at the end) for Prometheus. A reply that a
structured-output server returned as JSON is read by its keys instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

QUALITY_PROMPT = "wikigen/quality"
OUTLINE_PROMPT = "wikigen/outline_score"
RUBRIC_PROMPT = "wikigen/rubric"

INSTRUCTION = "You are a Wikipedia editor. Your task is write a wikipedia page for the topic: {}"
"""The instruction Prometheus is told the article answers (STORM's ``format_prompt``, verbatim
with its grammar)."""


@dataclass(frozen=True)
class Rubric:
    """One Prometheus criterion of Appendix D: the question and what each score 1-5 means."""

    criteria: str
    scores: tuple[str, str, str, str, str]

    def text(self) -> str:
        """The rubric as Prometheus 2's ``SCORE_RUBRIC_TEMPLATE`` lays it out."""
        lines = [f"[{self.criteria}]"]
        lines += [f"Score {n}: {d}" for n, d in enumerate(self.scores, 1)]
        return "\n".join(lines)


RUBRICS: dict[str, Rubric] = {
    "organization": Rubric(
        "Coherence and Organization: Is the article well-organized and logically structured?",
        (
            "Disorganized; lacks logical structure and coherence.",
            "Fairly organized; a basic structure is present but not consistently followed.",
            "Organized; a clear structure is mostly followed with some lapses in coherence.",
            "Good organization; a clear structure with minor lapses in coherence.",
            "Excellently organized; the article is logically structured with seamless "
            "transitions and a clear argument.",
        ),
    ),
    "focus": Rubric(
        "Relevance and Focus: Does the article stay on topic and maintain a clear focus?",
        (
            "Off-topic; the content does not align with the headline or core subject.",
            "Somewhat on topic but with several digressions; the core subject is evident but "
            "not consistently adhered to.",
            "Generally on topic, despite a few unrelated details.",
            "Mostly on topic and focused; the narrative has a consistent relevance to the core "
            "subject with infrequent digressions.",
            "Exceptionally focused and entirely on topic; the article is tightly centered on the "
            "subject, with every piece of information contributing to a comprehensive "
            "understanding of the topic.",
        ),
    ),
    "coverage": Rubric(
        "Broad Coverage: Does the article provide an in-depth exploration of the topic and have "
        "good coverage?",
        (
            "Severely lacking; offers little to no coverage of the topic\u2019s primary aspects, "
            "resulting in a very narrow perspective.",
            "Partial coverage; includes some of the topic\u2019s main aspects but misses others, "
            "resulting in an incomplete portrayal.",
            "Acceptable breadth; covers most main aspects, though it may stray into minor "
            "unnecessary details or overlook some relevant points.",
            "Good coverage; achieves broad coverage of the topic, hitting on all major points "
            "with minimal extraneous information.",
            "Exemplary in breadth; delivers outstanding coverage, thoroughly detailing all "
            "crucial aspects of the topic without including irrelevant information.",
        ),
    ),
}
"""Organization, Focus and Coverage as Appendix D words them (STORM's ``eval_rubric_5.json``)."""

SCORES = ("fluency", "info", "outline", "organization", "focus", "coverage")
"""The six judged scores, in the paper's Table 2 order within each dimension."""

_CITATION = re.compile(r"\s*\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]")
_HEADING_LINE = re.compile(r"^[ \t]*={2,}\s*([^=\n]+?)\s*={2,}[ \t]*$", re.M)


def judged_text(article: str) -> str:
    """The article as the judges read it: its citation marks (``[3]``, ``[1, 2]``) removed,
    since the documents they point to are not shown; headings and paragraphs kept."""
    return "\n".join(_CITATION.sub("", line).rstrip() for line in article.splitlines()).strip()


def headings(article: str) -> list[str]:
    """The ``==Heading==`` lines of an article, in order."""
    return [m[1].strip() for m in _HEADING_LINE.finditer(article)]


def judge_variables(
    title: str, article: str, outline: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """The variables of each judge's prompt, by score name (``fluency`` stands for the one
    Fluency-and-Info call). ``outline``: the planned headings (PRR); unset, the article's own
    ``==Heading==`` lines."""
    text = judged_text(article)
    shown = list(outline) if outline is not None else headings(article)
    out: dict[str, dict[str, Any]] = {
        "fluency": {"title": title, "article": text},
        "outline": {"title": title, "headings": shown},
    }
    for name, rubric in RUBRICS.items():
        out[name] = {
            "instruction": INSTRUCTION.format(title),
            "response": text,
            "rubric": rubric.text(),
            "criterion": name,
        }
    return out


class ScoreError(ValueError):
    """A judge answer that holds no usable score; the message says why."""


def _number(value: str) -> int:
    if not re.fullmatch(r"\d+", value):
        raise ScoreError(f"the score {value!r} is not a whole number")
    return int(value)


def _json_scores(reply: str, keys: Sequence[str]) -> dict[str, Any] | None:
    """The reply's JSON object when it holds every one of ``keys`` (a structured answer)."""
    start = reply.find("{")
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(reply, start)
    except json.JSONDecodeError:
        return None
    if isinstance(value, dict) and all(k in value for k in keys):
        return value
    return None


_QUALITY = {
    name: re.compile(rf"{label}\s*:\s*(?:score\s*)?(\d+(?:\.\d+)?)", re.I)
    for name, label in (
        ("fluency", "fluency"),
        ("info", "informativeness"),
        ("faithfulness", "faithfulness"),
    )
}
_JSON_KEYS = {"fluency": "fluency", "info": "informativeness", "faithfulness": "faithfulness"}
_FIRST_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w])")
_PROMETHEUS = re.compile(
    r"""(?:\[RESULT\]|\[SCORE\]|Score:?|score:?|Result:?|\[Result\]:?|score\s+of)
        \s*(?:\(|\[|\s)*(\d+)(?:(?:\)|\]|\s|$)|(?:/\s*5|\s*out\s*of\s*5))?(?:\s*$)""",
    re.I | re.X,
)
"""prometheus-eval's absolute-grading pattern (``parser._parse_output_absolute``): a score
after ``[RESULT]`` (or ``Score:``, ``score of``...) at the very end of the reply."""
ZERO_TO_FIVE = (0, 5)
ONE_TO_FIVE = (1, 5)
BOUNDS = {"fluency": ZERO_TO_FIVE, "info": ZERO_TO_FIVE, "outline": ZERO_TO_FIVE}
BOUNDS |= {name: ONE_TO_FIVE for name in RUBRICS}
"""Each reported score's range: the GPT-4 prompts ask for 0-5, Prometheus grades 1-5."""


def read_quality(reply: str) -> dict[str, int | None]:
    """Fluency, Info and Faithfulness of the Fluency prompt's reply (``Fluency: 4,
    Informativeness: 3, Faithfulness: 5``, or JSON with ``fluency``, ``informativeness`` and
    ``faithfulness``). Fluency and Info must be there; Faithfulness, never reported, is
    ``None`` when missing."""
    found = _json_scores(reply, ("fluency", "informativeness"))
    out: dict[str, int | None] = {}
    for name, key in _JSON_KEYS.items():
        if found is not None:
            value = found.get(key)
        elif (match := _QUALITY[name].search(reply)) is not None:
            value = _number(match[1])
        else:
            value = None
        if value is None and name != "faithfulness":
            raise ScoreError(f"no '{key.capitalize()}: N' in the answer")
        out[name] = None if value is None else checked(name, value, ZERO_TO_FIVE)
    return out


def read_outline(reply: str) -> int:
    """The Outline prompt's score: the first number of the reply (or JSON ``score``)."""
    found = _json_scores(reply, ("score",))
    if found is not None:
        return checked("outline", found["score"], ZERO_TO_FIVE)
    match = _FIRST_NUMBER.search(reply)
    if match is None:
        raise ScoreError("no score in the answer")
    return checked("outline", _number(match[1]), ZERO_TO_FIVE)


def read_rubric(reply: str, name: str = "grade") -> tuple[str, int]:
    """A Prometheus grade: the feedback, and the number after ``[RESULT]`` at the end of the
    reply (or JSON ``feedback`` and ``score``)."""
    found = _json_scores(reply, ("score",))
    if found is not None:
        return str(found.get("feedback", "")), checked(name, found["score"], ONE_TO_FIVE)
    match = _PROMETHEUS.search(reply.strip())
    if match is None:
        raise ScoreError("no '[RESULT] N' at the end of the answer")
    return reply[: match.start()].strip(), checked(name, int(match[1]), ONE_TO_FIVE)


def checked(name: str, value: Any, bounds: tuple[int, int]) -> int:
    """``value`` when it is a whole number within ``bounds``; :class:`ScoreError` naming
    ``name`` otherwise."""
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScoreError(f"{name}: {value!r} is not a whole number")
    if not low <= value <= high:
        raise ScoreError(f"{name}: {value} is outside {low}-{high}")
    return value


def read_scores(judge: str, reply: str) -> dict[str, int]:
    """The reported scores one judge's reply gives, by score name; :class:`ScoreError` when it
    gives none. ``judge``: ``fluency`` (Fluency and Info), ``outline``, or a rubric's name."""
    if judge == "fluency":
        quality = read_quality(reply)
        return {"fluency": quality["fluency"], "info": quality["info"]}  # type: ignore[dict-item]
    if judge == "outline":
        return {"outline": read_outline(reply)}
    if judge in RUBRICS:
        return {judge: read_rubric(reply, judge)[1]}
    raise KeyError(f"no judge named {judge!r}; known: fluency, outline, {', '.join(RUBRICS)}")


def judges(scores: Sequence[str]) -> list[str]:
    """The judge calls that give ``scores`` (``fluency`` and ``info`` share one), in order."""
    calls = {"info": "fluency"}
    return list(dict.fromkeys(calls.get(s, s) for s in scores))


def prompt_of(judge: str) -> str:
    """The prompt file a judge call renders."""
    return {"fluency": QUALITY_PROMPT, "outline": OUTLINE_PROMPT}.get(judge, RUBRIC_PROMPT)


def column(score: str) -> str:
    """The column (and metrics key) of a judged score: ``fluency`` -> ``fluency_score``."""
    return f"{score}_score"


def mean_scores(rows: Sequence[Mapping[str, Any]], names: Sequence[str] = SCORES) -> dict[str, Any]:
    """Per score column: the mean over the rows that have it (on the score's own 0-5 or 1-5
    scale, two decimals; ``None`` when no row has it)."""
    out: dict[str, Any] = {}
    for name in names:
        values = [r[column(name)] for r in rows if r.get(column(name)) is not None]
        out[column(name)] = round(sum(values) / len(values), 2) if values else None
    return out
