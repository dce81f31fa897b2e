"""The steps of SummHay synthesis around the documents: 1. subtopics; 2. insights per subtopic;
3. near-duplicates; 4. classification back to the subtopic; 5. the seeded document plan;
after the documents, the insights they place; 8. one query per subtopic. Each step records what
it leaves out on the :class:`Synthesis`."""

from __future__ import annotations

import random
from typing import Any

from builders.summhay.answers import (
    ClassifyAnswer,
    InsightsAnswer,
    QueriesAnswer,
    SubtopicsAnswer,
    enough_insights,
    enough_subtopics,
)
from builders.summhay.plan import PlanError, plan_documents
from builders.summhay.records import Document, Insight, PlannedDocument, Subtopic
from builders.summhay.settings import SummhaySettings
from builders.summhay.verify import misclassified, near_duplicates
from pipelines.llm import Ask, Limits, LLMClient
from pipelines.synthesis.summhay_outcome import Synthesis, subtopic_vars


def ask_subtopics(
    client: LLMClient, result: Synthesis, base: dict[str, Any], n: int
) -> list[Subtopic] | None:
    """Step 1: ``n`` subtopics, their names made unique; None (the topic dropped) on failure."""
    answer = client.ask(
        Ask(
            "summhay/subtopics",
            {**base, "n": n},
            SubtopicsAnswer,
            enough_subtopics(n),
            Limits(min_items={"subtopics": n}, max_items={"subtopics": 2 * n}),
        )
    )
    if not answer.ok:
        topic_id = result.topic.topic_id
        result.drop("topic", topic_id, "subtopics", "generation_failed", answer.error)
        return None
    unique = {s.name.strip().lower(): s for s in answer.value.subtopics}
    return [
        Subtopic(f"S{i + 1}", s.name.strip(), s.description.strip())
        for i, s in enumerate(list(unique.values())[:n])
    ]


def ask_insights(
    client: LLMClient, result: Synthesis, base: dict[str, Any], subtopics: list[Subtopic], m: int
) -> tuple[list[Subtopic], list[Insight]]:
    """Step 2: up to ``m`` distinct insights per subtopic; the subtopics answered, and their
    insights."""
    asks = [
        Ask(
            "summhay/insights",
            {
                **base,
                "subtopic": {"name": s.name, "description": s.description},
                "index": i + 1,
                "n": m,
            },
            InsightsAnswer,
            enough_insights(m),
            Limits(min_items={"insights": m}, max_items={"insights": 2 * m}),
        )
        for i, s in enumerate(subtopics)
    ]
    insights: list[Insight] = []
    answered = []
    for s, out in zip(
        subtopics, client.ask_many(asks, "summhay: insights", len(asks)), strict=True
    ):
        if not out.ok:
            result.drop("subtopic", s.subtopic_id, "insights", "generation_failed", out.error)
            continue
        answered.append(s)
        texts = list(dict.fromkeys(t.strip() for t in out.value.insights if t.strip()))[:m]
        insights += [
            Insight(f"{s.subtopic_id}.{k + 1}", s.subtopic_id, t) for k, t in enumerate(texts)
        ]
    return answered, insights


def drop_near_duplicates(
    result: Synthesis, insights: list[Insight], settings: SummhaySettings
) -> list[Insight]:
    """Step 3: the insights left after near-duplicates across the haystack are dropped (by
    embedding cosine or by word overlap, as ``settings.dedup`` says)."""
    if settings.dedup == "embedding" and insights:
        from pipelines.retrieval.dense import shared_scorer

        vectors = shared_scorer(settings.dedup_model).embed([i.text for i in insights]).tolist()
        insights, repeats = near_duplicates(insights, settings.dedup_cosine, vectors)
    else:
        insights, repeats = near_duplicates(insights, settings.dedup_threshold)
    for dropped, kept in repeats.items():
        result.drop("insight", dropped, "dedup", "near_duplicate", f"repeats {kept}")
    return insights


def classify_insights(
    client: LLMClient,
    result: Synthesis,
    base: dict[str, Any],
    subtopics: list[Subtopic],
    insights: list[Insight],
) -> list[Insight]:
    """Step 4: the insights the model classifies back to their own subtopic (none when the
    classification fails)."""
    if not insights:
        return insights
    verdict = client.ask(
        Ask(
            "summhay/classify",
            {
                **base,
                "subtopics": subtopic_vars(subtopics),
                "insights": [{"insight_id": i.insight_id, "text": i.text} for i in insights],
            },
            ClassifyAnswer,
            limits=Limits(
                enums={
                    "insight_id": [i.insight_id for i in insights],
                    "subtopic_id": [s.subtopic_id for s in subtopics],
                },
                max_items={"assignments": len(insights)},
            ),
        )
    )
    if not verdict.ok:
        for i in insights:
            result.drop("insight", i.insight_id, "classify", "classification_failed", verdict.error)
        return []
    chosen = {a.insight_id: a.subtopic_id for a in verdict.value.assignments}
    wrong = misclassified(insights, chosen)
    for iid, why in wrong.items():
        result.drop("insight", iid, "classify", "misclassified", why)
    return [i for i in insights if i.insight_id not in wrong]


def plan(
    result: Synthesis,
    subtopics: list[Subtopic],
    insights: list[Insight],
    settings: SummhaySettings,
    rng: random.Random,
) -> list[PlannedDocument] | None:
    """Step 5: the seeded document plan; None (the topic dropped) when it cannot be made."""
    try:
        return plan_documents(
            subtopics,
            insights,
            documents=settings.documents,
            subtopics_per_document=settings.subtopics_per_document,
            max_insights=settings.max_insights_per_subtopic,
            rng=rng,
        )
    except PlanError as exc:
        result.drop("topic", result.topic.topic_id, "plan", "unplannable", str(exc))
        return None


def placed(result: Synthesis, insights: list[Insight], documents: list[Document]) -> list[Insight]:
    """The insights some verified document holds; the others lost every document."""
    held = {iid for d in documents for iid in d.insight_ids}
    for i in insights:
        if i.insight_id not in held:
            result.drop(
                "insight",
                i.insight_id,
                "documents",
                "no_document",
                "every planned document was dropped",
            )
    return [i for i in insights if i.insight_id in held]


def ask_queries(
    client: LLMClient, result: Synthesis, base: dict[str, Any], subtopics: list[Subtopic]
) -> list[Subtopic]:
    """Step 8: the subtopics with their query; those the answer leaves without one are
    dropped."""
    answer = client.ask(
        Ask(
            "summhay/queries",
            {**base, "subtopics": subtopic_vars(subtopics)},
            QueriesAnswer,
            limits=Limits(
                enums={"subtopic_id": [s.subtopic_id for s in subtopics]},
                max_items={"queries": len(subtopics)},
            ),
        )
    )
    found = {}
    if answer.ok:
        found = {q.subtopic_id: q.query.strip() for q in answer.value.queries}
    kept = []
    for s in subtopics:
        if s.subtopic_id in found:
            kept.append(Subtopic(s.subtopic_id, s.name, s.description, found[s.subtopic_id]))
        else:
            why = answer.error if not answer.ok else "the answer has no query for it"
            result.drop("subtopic", s.subtopic_id, "queries", "no_query", why)
    return kept
