"""Typed records of SummHay haystacks and their Arrow schemas, kept in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa

Domain = Literal["news", "conversation"]


@dataclass(frozen=True)
class Topic:
    """A haystack's topic: a news story followed by outlets, or a conversation among people.

    ``participants`` are the speakers (conversation) or the outlets (news); ``source`` is
    ``params`` or ``event:<event id>`` for topics drawn from the selected Wikipedia events.
    """

    topic_id: str
    domain: Domain
    topic: str
    participants: tuple[str, ...]
    source: str = "params"


@dataclass(frozen=True)
class Subtopic:
    """One distinct angle of the topic; ``query`` is what a summarizer is asked about it."""

    subtopic_id: str
    name: str
    description: str
    query: str = ""


@dataclass(frozen=True)
class Insight:
    """One sentence built around a specific number, date or entity, unique in the haystack."""

    insight_id: str
    subtopic_id: str
    text: str


@dataclass(frozen=True)
class PlannedDocument:
    """Which subtopics and insights one document must carry (and no other insight)."""

    document_id: str
    subtopic_ids: tuple[str, ...]
    insight_ids: tuple[str, ...]


@dataclass(frozen=True)
class Document:
    """A generated document whose insights were checked both ways."""

    document_id: str
    text: str
    subtopic_ids: tuple[str, ...]
    insight_ids: tuple[str, ...]
    attempts: int
    word_count: int


@dataclass(frozen=True)
class Haystack:
    """A verified haystack: only insights with gold documents and only verified documents."""

    topic: Topic
    subtopics: tuple[Subtopic, ...]
    insights: tuple[Insight, ...]
    documents: tuple[Document, ...]
    provenance: dict[str, Any] = field(default_factory=dict)

    def gold(self, insight_id: str) -> list[str]:
        """The documents that carry ``insight_id``."""
        return [d.document_id for d in self.documents if insight_id in d.insight_ids]

    def to_row(self) -> dict[str, Any]:
        """Return the haystack as a row matching :data:`HAYSTACK_SCHEMA`."""
        return {
            "topic_id": self.topic.topic_id,
            "domain": self.topic.domain,
            "topic": self.topic.topic,
            "participants": list(self.topic.participants),
            "source": self.topic.source,
            "subtopics": [
                {
                    "subtopic_id": s.subtopic_id,
                    "name": s.name,
                    "description": s.description,
                    "query": s.query,
                    "insights": [
                        {
                            "insight_id": i.insight_id,
                            "text": i.text,
                            "gold_document_ids": self.gold(i.insight_id),
                        }
                        for i in self.insights
                        if i.subtopic_id == s.subtopic_id
                    ],
                }
                for s in self.subtopics
            ],
            "documents": [
                {
                    "document_id": d.document_id,
                    "text": d.text,
                    "subtopic_ids": list(d.subtopic_ids),
                    "insight_ids": list(d.insight_ids),
                    "attempts": d.attempts,
                    "word_count": d.word_count,
                }
                for d in self.documents
            ],
            "provenance": [{"key": k, "value": str(v)} for k, v in sorted(self.provenance.items())],
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Haystack:
        """Rebuild a haystack from a row read back from Parquet."""
        topic = Topic(
            row["topic_id"], row["domain"], row["topic"], tuple(row["participants"]), row["source"]
        )
        subtopics = tuple(
            Subtopic(s["subtopic_id"], s["name"], s["description"], s["query"])
            for s in row["subtopics"]
        )
        insights = tuple(
            Insight(i["insight_id"], s["subtopic_id"], i["text"])
            for s in row["subtopics"]
            for i in s["insights"]
        )
        documents = tuple(
            Document(
                d["document_id"],
                d["text"],
                tuple(d["subtopic_ids"]),
                tuple(d["insight_ids"]),
                d["attempts"],
                d["word_count"],
            )
            for d in row["documents"]
        )
        provenance = {kv["key"]: kv["value"] for kv in row["provenance"]}
        return cls(topic, subtopics, insights, documents, provenance)


_KV = pa.struct([("key", pa.string()), ("value", pa.string())])
_INSIGHT = pa.struct(
    [
        ("insight_id", pa.string()),
        ("text", pa.string()),
        ("gold_document_ids", pa.list_(pa.string())),
    ]
)
_SUBTOPIC = pa.struct(
    [
        ("subtopic_id", pa.string()),
        ("name", pa.string()),
        ("description", pa.string()),
        ("query", pa.string()),
        ("insights", pa.list_(_INSIGHT)),
    ]
)
_DOCUMENT = pa.struct(
    [
        ("document_id", pa.string()),
        ("text", pa.string()),
        ("subtopic_ids", pa.list_(pa.string())),
        ("insight_ids", pa.list_(pa.string())),
        ("attempts", pa.int32()),
        ("word_count", pa.int32()),
    ]
)

HAYSTACK_SCHEMA = pa.schema(
    [
        pa.field("topic_id", pa.string(), nullable=False),
        pa.field("domain", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("participants", pa.list_(pa.string())),
        pa.field("source", pa.string()),
        pa.field("subtopics", pa.list_(_SUBTOPIC)),
        pa.field("documents", pa.list_(_DOCUMENT)),
        pa.field("provenance", pa.list_(_KV)),
    ]
)

POSITIONS = ("random", "top", "middle", "bottom")
"""Where a subtopic's relevant documents sit in the haystack order (SummHay Table 3)."""

ORDER_SCHEMA = pa.schema(
    [
        pa.field("topic_id", pa.string(), nullable=False),
        pa.field("subtopic_id", pa.string()),
        pa.field("position", pa.string()),
        pa.field("document_ids", pa.list_(pa.string())),
    ]
)

CONTEXT_SCHEMA = pa.schema(
    [
        pa.field("topic_id", pa.string(), nullable=False),
        pa.field("subtopic_id", pa.string()),
        pa.field("retriever", pa.string()),
        pa.field("document_ids", pa.list_(pa.string())),
        pa.field("context_tokens", pa.int64()),
        pa.field("reachable", pa.int32()),
        pa.field("insights", pa.int32()),
    ]
)
"""One retriever's context for one subtopic, and how many insights it can reach."""

_VERDICT = pa.struct(
    [
        ("insight_id", pa.string()),
        ("coverage", pa.string()),
        ("bullet_id", pa.int32()),
        ("precision", pa.float64()),
        ("recall", pa.float64()),
        ("f1", pa.float64()),
        ("retrievable_recall", pa.float64()),
        ("problem", pa.string()),
    ]
)
"""The judge's verdict on one insight and its citation scores (SummHay's per-insight values)."""

SCORE_SCHEMA = pa.schema(
    [
        *CONTEXT_SCHEMA,
        pa.field("status", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("summary", pa.string()),
        pa.field("bullets", pa.int32()),
        pa.field("unread_citations", pa.int32()),
        pa.field("insights_scored", pa.int32()),
        pa.field("covered", pa.int32()),
        pa.field("coverage", pa.float64()),
        pa.field("citation", pa.float64()),
        pa.field("joint", pa.float64()),
        pa.field("citation_precision", pa.float64()),
        pa.field("citation_recall", pa.float64()),
        pa.field("retrievable_citation_recall", pa.float64()),
        pa.field("citation_problems", pa.int32()),
        pa.field("verdicts", pa.list_(_VERDICT)),
    ]
)
"""A summary of one context, with the judge's verdict per insight and the SummHay scores of
that summary alone (a mean over no insight, e.g. Citation with nothing covered, is null)."""
