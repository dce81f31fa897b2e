"""WikiGenBench's writing and informativeness judges through the LLM layer.

Each judged article gets up to five calls (:mod:`benchsmith_scoring.wikigen_judges` says what
they are and how replies are read): Fluency and Info from one call, the Outline score, and
Prometheus' Organization, Focus and Coverage grades. Under ``llm.response_format: json_schema``
each score is asked for as a schema-bounded integer; otherwise the reply is read as the paper's
answer format. A reply with no usable score is a failed score with its reason, never a 0; the
article's other scores stand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from benchsmith_scoring import wikigen_judges as paper
from pipelines.llm import Ask, LLMClient
from pipelines.llm.structured import AnswerError


class QualityScores(BaseModel):
    """The Fluency prompt's three scores (Faithfulness is asked for, never reported)."""

    fluency: int = Field(ge=0, le=5)
    informativeness: int = Field(ge=0, le=5)
    faithfulness: int | None = Field(ge=0, le=5)

    @classmethod
    def from_reply(cls, text: str) -> QualityScores:
        """Read ``Fluency: 4, Informativeness: 3, Faithfulness: 5`` (or the JSON)."""
        try:
            found = paper.read_quality(text)
        except paper.ScoreError as exc:
            raise AnswerError(str(exc)) from None
        return cls(
            fluency=found["fluency"],
            informativeness=found["info"],
            faithfulness=found["faithfulness"],
        )


class OutlineScore(BaseModel):
    """The Outline prompt's score."""

    score: int = Field(ge=0, le=5)

    @classmethod
    def from_reply(cls, text: str) -> OutlineScore:
        """Read the first number of the reply (or the JSON)."""
        try:
            return cls(score=paper.read_outline(text))
        except paper.ScoreError as exc:
            raise AnswerError(str(exc)) from None


class RubricGrade(BaseModel):
    """A Prometheus 2 absolute grade: the feedback, then the score."""

    feedback: str
    score: int = Field(ge=1, le=5)

    @classmethod
    def from_reply(cls, text: str) -> RubricGrade:
        """Read ``(feedback) [RESULT] 4`` (or the JSON)."""
        try:
            feedback, score = paper.read_rubric(text)
        except paper.ScoreError as exc:
            raise AnswerError(str(exc)) from None
        return cls(feedback=feedback, score=score)


STAND_INS = "template stand-ins: counts, not judgments (builders/wikigen/responders.py)"


def judge_name(client: LLMClient) -> str:
    """What gave the judged scores: the backend and model, or that they are stand-ins."""
    if client.backend.name == "template":
        return STAND_INS
    return f"{client.backend.name}: {client.backend.model}"


ANSWERS: dict[str, type[BaseModel]] = {"fluency": QualityScores, "outline": OutlineScore}


def judge_asks(
    title: str, article: str, scores: Sequence[str], outline: Sequence[str] | None = None
) -> list[tuple[str, Ask[Any]]]:
    """``(judge, ask)`` for each judge call that gives ``scores`` on one article."""
    variables = paper.judge_variables(title, article, outline)
    return [
        (judge, Ask(paper.prompt_of(judge), variables[judge], ANSWERS.get(judge, RubricGrade)))
        for judge in paper.judges(scores)
    ]


def scores_of(judge: str, answer: BaseModel) -> dict[str, int]:
    """The reported scores of one judge's validated answer, by score name."""
    if isinstance(answer, QualityScores):
        return {"fluency": answer.fluency, "info": answer.informativeness}
    if isinstance(answer, OutlineScore):
        return {"outline": answer.score}
    assert isinstance(answer, RubricGrade)
    return {judge: answer.score}


@dataclass
class JudgedScores:
    """One article's judged scores by column, and the judges that failed with their reason."""

    scores: dict[str, int | None] = field(default_factory=dict)
    failed: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Judged:
    """What the judges read of one article."""

    title: str
    article: str
    outline: Sequence[str] | None = None


def judge_articles(
    client: LLMClient,
    articles: Sequence[Judged],
    scores: Sequence[str],
    description: str = "wikigen baselines: judging writing and informativeness",
) -> list[JudgedScores]:
    """``scores`` of every article (``None`` where its judge failed), in order;
    ``description`` labels the progress bar."""
    asked = [
        (k, judge, ask)
        for k, a in enumerate(articles)
        for judge, ask in judge_asks(a.title, a.article, scores, a.outline)
    ]
    out = [JudgedScores({paper.column(s): None for s in scores}) for _ in articles]
    outcomes = client.ask_many((ask for _, _, ask in asked), description, len(asked))
    for (k, judge, _), outcome in zip(asked, outcomes, strict=True):
        if not outcome.ok:
            for name in _reported(judge, scores):
                out[k].failed.append({"score": name, "reason": outcome.error})
            continue
        for name, value in scores_of(judge, outcome.value).items():
            if name in scores:
                out[k].scores[paper.column(name)] = value
    return out


def _reported(judge: str, scores: Sequence[str]) -> list[str]:
    names = ["fluency", "info"] if judge == "fluency" else [judge]
    return [n for n in names if n in scores]
