"""Settings of the ``contamination`` stage: which datasets it probes closed-book, the model's
declared knowledge cutoff, and the score from which an answer counts as known."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import Field

from builders.settings import Strict

ProbedDataset = Literal["lveval", "wikigenbench"]


class ContaminationThresholds(Strict):
    """The closed-book score from which an item is flagged (the model answered it unread)."""

    lveval: float = Field(
        0.5, ge=0, le=1, description="AK of the answer to an LV-Eval question asked alone."
    )
    wikigenbench: float = Field(
        0.3,
        ge=0,
        le=1,
        description=(
            "ROUGE-L F1 of an article written from the title alone against the reference "
            "article; unrelated articles of the same style score about 0.16."
        ),
    )


class ContaminationSettings(Strict):
    """A contamination probe: the configured model answers with no context at all."""

    datasets: list[ProbedDataset] = Field(
        default_factory=lambda: ["lveval", "wikigenbench"],
        description=(
            "lveval: every QA item's question with an empty context; wikigenbench: every "
            "title's article written from zero documents (WikiGenBench's #Docs = 0)."
        ),
    )
    cutoff: date | None = Field(
        None,
        description=(
            "The model's declared knowledge cutoff (a day, UTC): events created on or before "
            "it count as before. Unset: no before/after split."
        ),
    )
    thresholds: ContaminationThresholds = Field(default_factory=ContaminationThresholds)
