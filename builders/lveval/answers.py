"""The shapes the LLM layer validates LV-Eval answers against, and their extra rules."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from pydantic import BaseModel, Field


class Quote(BaseModel):
    """A verbatim quote of one passage that the answer rests on."""

    passage_id: str
    quote: str = Field(min_length=1)


class QuestionDraft(BaseModel):
    """A proposed question; it becomes a QA item once its quotes and answers check out."""

    question: str = Field(min_length=5)
    answers: list[str] = Field(min_length=1)
    answer_keywords: str = ""
    hops: int = Field(1, ge=1, le=4)
    evidence: list[Quote] = Field(min_length=1)


class QuestionsAnswer(BaseModel):
    """Questions about one event."""

    questions: list[QuestionDraft]


class FactAnswer(BaseModel):
    """One confusing fact."""

    fact: str


class RuleDraft(BaseModel):
    """A proposed replacement."""

    orig: str = Field(min_length=1)
    repl: str = Field(min_length=1)


class RulesAnswer(BaseModel):
    """Replacements proposed for one QA item."""

    rules: list[RuleDraft]


def known_passages(ids: Collection[str]) -> Callable[[Any], str | None]:
    """Every quote must name a passage the prompt showed."""

    def check(answer: QuestionsAnswer) -> str | None:
        for draft in answer.questions:
            for quote in draft.evidence:
                if quote.passage_id not in ids:
                    return f"passage_id {quote.passage_id!r} is not one of the passages given"
        return None

    return check
