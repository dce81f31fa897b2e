"""The ``summhay`` settings: topics, haystack shape and verification thresholds."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt, model_validator

from builders.settings import Strict


class TopicSpec(Strict):
    """A topic written in params: a news story, or a conversation among named participants."""

    topic_id: str = Field(pattern=r"^[A-Za-z0-9_-]+$", description="Unique id of the topic.")
    domain: Literal["news", "conversation"] = Field(
        description="news: articles of the outlets; conversation: transcripts of participants."
    )
    topic: str = Field(min_length=10, description="What the haystack is about, one sentence.")
    participants: list[str] = Field(
        default_factory=list, description="Speakers (conversation) or outlets (news)."
    )


class SummhaySettings(Strict):
    """Haystack synthesis. Defaults follow the SummHay paper (LLM mode): 100 documents of about
    750 words, 2 subtopics per document with up to 4 insights each."""

    seed: StrictInt = Field(2026, description="Seed of the document plan and orders.")
    topics: list[TopicSpec] = Field(default_factory=list)
    topics_from_events: StrictInt = Field(
        0, ge=0, description="Also turn this many selected Wikipedia events into news topics."
    )
    outlets: list[str] = Field(
        default_factory=lambda: ["The Daily Ledger", "Morning Courier", "Evening Gazette"],
        description="Outlets voiced by documents of event topics.",
    )
    subtopics: StrictInt = Field(8, ge=1, description="Per topic (SummHay: 7-9).")
    insights_per_subtopic: StrictInt = Field(6, ge=1, description="SummHay: 3-10, 6.75 on average.")
    documents: StrictInt = Field(100, ge=1, description="Per haystack (SummHay: about 100).")
    words_per_document: StrictInt = Field(750, ge=20, description="SummHay: about 750.")
    subtopics_per_document: StrictInt = Field(2, ge=1, description="SummHay: 2.")
    max_insights_per_subtopic: StrictInt = Field(
        4, ge=1, description="Per subtopic in one document (SummHay: up to 4)."
    )
    dedup: Literal["lexical", "embedding"] = Field(
        "lexical",
        description=(
            "How near-duplicate insights are found: word-set Jaccard, or the cosine of sentence "
            "embeddings (all-MiniLM-L6-v2 by default, or dedup_model)."
        ),
    )
    dedup_threshold: float = Field(
        0.7, gt=0, le=1, description="Jaccard (lexical) at which two insights count as one."
    )
    dedup_cosine: float = Field(
        0.85,
        gt=0,
        le=1,
        description=(
            "Cosine (embedding) at which two insights count as one; MiniLM puts paraphrases at "
            "about 0.8-0.95 and unrelated facts below 0.5. Template insights share one sentence "
            "shape, so the template backend keeps lexical dedup."
        ),
    )
    dedup_model: str | None = Field(
        None, description="Sentence encoder for embedding dedup; unset: all-MiniLM-L6-v2."
    )
    document_attempts: StrictInt = Field(
        3, ge=1, description="Generations per document before it is dropped."
    )
    min_document_words: float = Field(
        0.3, gt=0, le=1, description="Share of words_per_document a document must reach."
    )

    @model_validator(mode="after")
    def _consistent(self) -> SummhaySettings:
        ids = [t.topic_id for t in self.topics]
        if dupes := sorted({i for i in ids if ids.count(i) > 1}):
            raise ValueError(f"topic ids must be unique: {', '.join(dupes)} repeats")
        if self.subtopics_per_document > self.subtopics:
            raise ValueError("subtopics_per_document cannot exceed subtopics")
        return self
