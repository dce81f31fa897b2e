"""SummHay haystack synthesis, step by step, with every verdict kept.

1. subtopics; 2. insights per subtopic; 3-4. verification (near-duplicates, classification back
to the subtopic); 5. the seeded document plan; 6. documents, one per ask; 7. the inclusion check
both ways, regenerating a failing document with the reason up to ``document_attempts`` times;
8. one query per subtopic. Insights left without a verified document, subtopics left without
insights, and haystacks left empty are dropped with a reason. Only verified items are returned.
The steps are in :mod:`pipelines.synthesis.summhay_steps` and (6-7)
:mod:`pipelines.synthesis.summhay_documents`.
"""

from __future__ import annotations

import random

from builders.summhay.records import Document, Haystack, Insight, PlannedDocument, Subtopic
from builders.summhay.records import Topic as TopicRecord
from builders.summhay.settings import SummhaySettings
from pipelines.llm import LLMClient
from pipelines.synthesis.summhay_documents import write_documents
from pipelines.synthesis.summhay_outcome import Synthesis, topic_vars, with_insights
from pipelines.synthesis.summhay_steps import (
    ask_insights,
    ask_queries,
    ask_subtopics,
    classify_insights,
    drop_near_duplicates,
    placed,
    plan,
)


def synthesize(client: LLMClient, topic: TopicRecord, settings: SummhaySettings) -> Synthesis:
    """Build one verified haystack for ``topic``."""
    result = Synthesis(topic)
    rng = random.Random(f"{settings.seed}:{topic.topic_id}")
    base = topic_vars(topic)
    subtopics = ask_subtopics(client, result, base, settings.subtopics)
    if subtopics is None:
        return result
    m = settings.insights_per_subtopic
    subtopics, insights = ask_insights(client, result, base, subtopics, m)
    insights = drop_near_duplicates(result, insights, settings)
    insights = classify_insights(client, result, base, subtopics, insights)
    subtopics = with_insights(result, subtopics, insights, "verify")
    plans = plan(result, subtopics, insights, settings, rng)
    if plans is None:
        return result
    documents = write_documents(client, result, base, plans, insights, settings, rng)
    insights = placed(result, insights, documents)
    subtopics = with_insights(result, subtopics, insights, "documents")
    if not documents or not subtopics:
        result.drop("topic", topic.topic_id, "documents", "empty", "no verified document")
        return result
    subtopics = ask_queries(client, result, base, subtopics)
    if not subtopics:
        result.drop("topic", topic.topic_id, "queries", "empty", "no subtopic has a query")
        return result
    result.haystack = _haystack(client, result, subtopics, insights, documents, settings, plans)
    return result


def _haystack(
    client: LLMClient,
    result: Synthesis,
    subtopics: list[Subtopic],
    insights: list[Insight],
    documents: list[Document],
    settings: SummhaySettings,
    plans: list[PlannedDocument],
) -> Haystack:
    """The haystack of the subtopics that kept a query, with their insights and documents."""
    kept = {s.subtopic_id for s in subtopics}
    return Haystack(
        result.topic,
        tuple(subtopics),
        tuple(i for i in insights if i.subtopic_id in kept),
        tuple(d for d in documents if set(d.subtopic_ids) & kept),
        {
            "backend": client.backend.name,
            "model": client.backend.model,
            "seed": settings.seed,
            "planned_documents": len(plans),
            "dropped": len(result.drops),
        },
    )
