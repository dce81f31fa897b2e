"""SummHay's public JSON layout (one file per haystack), so its released evaluation reads ours.

Layout: ``{topic_id, topic, topic_metadata{participants[] | articles[]}, subtopics[{subtopic_id,
subtopic_name, subtopic, query, insights[{insight_id, insight_name, insight}]}],
documents[{document_id, document_text, document_metadata, insights_included[]}]}``. The gold for
an insight is the documents whose ``insights_included`` holds it.
"""

from __future__ import annotations

from typing import Any

from builders.summhay.records import Haystack

NAME_WORDS = 8


def insight_name(text: str) -> str:
    """A short name for an insight: its first words."""
    words = text.split()
    return " ".join(words[:NAME_WORDS]) + (" ..." if len(words) > NAME_WORDS else "")


def to_official(haystack: Haystack) -> dict[str, Any]:
    """The haystack as SummHay publishes its own."""
    topic = haystack.topic
    key = "participants" if topic.domain == "conversation" else "articles"
    return {
        "topic_id": topic.topic_id,
        "topic": topic.topic,
        "topic_metadata": {key: list(topic.participants)},
        "subtopics": [
            {
                "subtopic_id": s.subtopic_id,
                "subtopic_name": s.name,
                "subtopic": s.description,
                "query": s.query,
                "insights": [
                    {
                        "insight_id": i.insight_id,
                        "insight_name": insight_name(i.text),
                        "insight": i.text,
                    }
                    for i in haystack.insights
                    if i.subtopic_id == s.subtopic_id
                ],
            }
            for s in haystack.subtopics
        ],
        "documents": [
            {
                "document_id": d.document_id,
                "document_text": d.text,
                "document_metadata": {"subtopic_ids": list(d.subtopic_ids), "words": d.word_count},
                "insights_included": list(d.insight_ids),
            }
            for d in haystack.documents
        ],
    }
