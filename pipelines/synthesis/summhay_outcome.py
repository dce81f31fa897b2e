"""What every step of SummHay synthesis shares: the outcome of one topic with its drops, the
topic's prompt variables, and the subtopics that still have insights."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from builders.drops import Drop
from builders.summhay.records import Haystack, Insight, Subtopic
from builders.summhay.records import Topic as TopicRecord


@dataclass
class Synthesis:
    """The outcome for one topic: the haystack (or None) and every drop along the way."""

    topic: TopicRecord
    haystack: Haystack | None = None
    drops: list[Drop] = field(default_factory=list)

    def drop(self, kind: str, item_id: str, step: str, reason: str, detail: str = "") -> None:
        self.drops.append(Drop("summhay", self.topic.topic_id, kind, item_id, step, reason, detail))


def topic_vars(topic: TopicRecord) -> dict[str, Any]:
    """The prompt variables every ask about ``topic`` starts from."""
    return {
        "topic_id": topic.topic_id,
        "topic": topic.topic,
        "domain": topic.domain,
        "participants": list(topic.participants),
    }


def subtopic_vars(subtopics: list[Subtopic]) -> list[dict[str, str]]:
    """The subtopics as a prompt lists them."""
    return [
        {"subtopic_id": s.subtopic_id, "name": s.name, "description": s.description}
        for s in subtopics
    ]


def with_insights(
    result: Synthesis, subtopics: list[Subtopic], insights: list[Insight], step: str
) -> list[Subtopic]:
    """The subtopics that keep an insight; the others are dropped at ``step``."""
    have = {i.subtopic_id for i in insights}
    for s in subtopics:
        if s.subtopic_id not in have:
            result.drop("subtopic", s.subtopic_id, step, "no_insight", "every insight was dropped")
    return [s for s in subtopics if s.subtopic_id in have]
