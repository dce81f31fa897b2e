"""SummHay haystack synthesis, step by step, with every verdict kept.

1. subtopics; 2. insights per subtopic; 3-4. verification (near-duplicates, classification back
to the subtopic); 5. the seeded document plan; 6. documents, one per ask; 7. the inclusion check
both ways, regenerating a failing document with the reason up to ``document_attempts`` times;
8. one query per subtopic. Insights left without a verified document, subtopics left without
insights, and haystacks left empty are dropped with a reason. Only verified items are returned.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from builders.drops import Drop
from builders.summhay.answers import (
    ClassifyAnswer,
    InclusionAnswer,
    InsightsAnswer,
    QueriesAnswer,
    SubtopicsAnswer,
    enough_insights,
    enough_subtopics,
    min_words,
)
from builders.summhay.plan import PlanError, plan_documents
from builders.summhay.records import Document, Haystack, Insight, PlannedDocument, Subtopic
from builders.summhay.records import Topic as TopicRecord
from builders.summhay.responders import STYLES
from builders.summhay.settings import SummhaySettings
from builders.summhay.verify import check_inclusion, misclassified, near_duplicates
from pipelines.llm import Ask, Limits, LLMClient, TextAnswer


@dataclass
class Synthesis:
    """The outcome for one topic: the haystack (or None) and every drop along the way."""

    topic: TopicRecord
    haystack: Haystack | None = None
    drops: list[Drop] = field(default_factory=list)

    def drop(self, kind: str, item_id: str, step: str, reason: str, detail: str = "") -> None:
        self.drops.append(Drop("summhay", self.topic.topic_id, kind, item_id, step, reason, detail))


def _subtopic_vars(subtopics: list[Subtopic]) -> list[dict[str, str]]:
    return [
        {"subtopic_id": s.subtopic_id, "name": s.name, "description": s.description}
        for s in subtopics
    ]


def synthesize(client: LLMClient, topic: TopicRecord, settings: SummhaySettings) -> Synthesis:
    """Build one verified haystack for ``topic``."""
    result = Synthesis(topic)
    rng = random.Random(f"{settings.seed}:{topic.topic_id}")
    base = {
        "topic_id": topic.topic_id,
        "topic": topic.topic,
        "domain": topic.domain,
        "participants": list(topic.participants),
    }

    # 1. subtopics
    n = settings.subtopics
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
        result.drop("topic", topic.topic_id, "subtopics", "generation_failed", answer.error)
        return result
    unique = {s.name.strip().lower(): s for s in answer.value.subtopics}
    subtopics = [
        Subtopic(f"S{i + 1}", s.name.strip(), s.description.strip())
        for i, s in enumerate(list(unique.values())[:n])
    ]

    # 2. insights
    m = settings.insights_per_subtopic
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

    subtopics = answered

    # 3. near-duplicates across the haystack
    if settings.dedup == "embedding" and insights:
        from pipelines.retrieval.dense import shared_scorer

        vectors = shared_scorer(settings.dedup_model).embed([i.text for i in insights]).tolist()
        insights, repeats = near_duplicates(insights, settings.dedup_cosine, vectors)
    else:
        insights, repeats = near_duplicates(insights, settings.dedup_threshold)
    for dropped, kept in repeats.items():
        result.drop("insight", dropped, "dedup", "near_duplicate", f"repeats {kept}")

    # 4. classification back to the subtopic
    if insights:
        verdict = client.ask(
            Ask(
                "summhay/classify",
                {
                    **base,
                    "subtopics": _subtopic_vars(subtopics),
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
                result.drop(
                    "insight", i.insight_id, "classify", "classification_failed", verdict.error
                )
            insights = []
        else:
            chosen = {a.insight_id: a.subtopic_id for a in verdict.value.assignments}
            wrong = misclassified(insights, chosen)
            for iid, why in wrong.items():
                result.drop("insight", iid, "classify", "misclassified", why)
            insights = [i for i in insights if i.insight_id not in wrong]

    # 5. the document plan
    subtopics = _with_insights(result, subtopics, insights, "verify")
    try:
        plans = plan_documents(
            subtopics,
            insights,
            documents=settings.documents,
            subtopics_per_document=settings.subtopics_per_document,
            max_insights=settings.max_insights_per_subtopic,
            rng=rng,
        )
    except PlanError as exc:
        result.drop("topic", topic.topic_id, "plan", "unplannable", str(exc))
        return result

    # 6-7. documents, checked both ways, regenerated with the reason
    documents = write_documents(client, result, base, plans, insights, settings, rng)

    # insights and subtopics that lost every document
    placed = {iid for d in documents for iid in d.insight_ids}
    for i in insights:
        if i.insight_id not in placed:
            result.drop(
                "insight",
                i.insight_id,
                "documents",
                "no_document",
                "every planned document was dropped",
            )
    insights = [i for i in insights if i.insight_id in placed]
    subtopics = _with_insights(result, subtopics, insights, "documents")
    if not documents or not subtopics:
        result.drop("topic", topic.topic_id, "documents", "empty", "no verified document")
        return result

    # 8. queries
    subtopics = _queries(client, result, base, subtopics)
    if not subtopics:
        result.drop("topic", topic.topic_id, "queries", "empty", "no subtopic has a query")
        return result
    kept = {s.subtopic_id for s in subtopics}
    insights = [i for i in insights if i.subtopic_id in kept]
    documents = [d for d in documents if set(d.subtopic_ids) & kept]
    result.haystack = Haystack(
        topic,
        tuple(subtopics),
        tuple(insights),
        tuple(documents),
        {
            "backend": client.backend.name,
            "model": client.backend.model,
            "seed": settings.seed,
            "planned_documents": len(plans),
            "dropped": len(result.drops),
        },
    )
    return result


def _with_insights(
    result: Synthesis, subtopics: list[Subtopic], insights: list[Insight], step: str
) -> list[Subtopic]:
    have = {i.subtopic_id for i in insights}
    for s in subtopics:
        if s.subtopic_id not in have:
            result.drop("subtopic", s.subtopic_id, step, "no_insight", "every insight was dropped")
    return [s for s in subtopics if s.subtopic_id in have]


def write_documents(
    client: LLMClient,
    result: Synthesis,
    base: dict[str, Any],
    plans: list[PlannedDocument],
    insights: list[Insight],
    settings: SummhaySettings,
    rng: random.Random,
) -> list[Document]:
    """Steps 6-7: write each planned document, check it both ways against every insight of the
    haystack, regenerate a failing one with the reason; drop it after ``document_attempts``."""
    by_id = {i.insight_id: i for i in insights}
    all_insights = [{"insight_id": i.insight_id, "text": i.text} for i in insights]
    voices = list(result.topic.participants) or ["Staff reporter"]
    voice = {p.document_id: voices[rng.randrange(len(voices))] for p in plans}
    styles = STYLES[result.topic.domain]
    style = {p.document_id: styles[rng.randrange(len(styles))] for p in plans}
    feedback = {p.document_id: "" for p in plans}
    pending = list(plans)
    done: dict[str, Document] = {}
    least = max(20, int(settings.words_per_document * settings.min_document_words))
    for attempt in range(1, settings.document_attempts + 1):
        asks = [
            Ask(
                "summhay/document",
                {
                    **base,
                    "document_id": p.document_id,
                    "voice": voice[p.document_id],
                    "style": style[p.document_id],
                    "words": settings.words_per_document,
                    "insights": [by_id[i].text for i in p.insight_ids],
                    "feedback": feedback[p.document_id],
                },
                TextAnswer,
                min_words(least),
            )
            for p in pending
        ]
        written = list(client.ask_many(asks, f"summhay: documents (try {attempt})", len(asks)))
        texts = {p.document_id: o.value.text for p, o in zip(pending, written, strict=True) if o.ok}
        for p, o in zip(pending, written, strict=True):
            if not o.ok:
                feedback[p.document_id] = o.error
        checks = [
            Ask(
                "summhay/inclusion",
                {"document": texts[p.document_id], "insights": all_insights},
                InclusionAnswer,
                limits=Limits(enums={"present": list(by_id)}, max_items={"present": len(by_id)}),
            )
            for p in pending
            if p.document_id in texts
        ]
        checked = iter(client.ask_many(checks, "summhay: inclusion", len(checks)))
        retry = []
        for p in pending:
            if p.document_id in texts:
                verdict = next(checked)
                if verdict.ok:
                    inclusion = check_inclusion(p.insight_ids, verdict.value.present, by_id)
                    if inclusion.ok:
                        text = texts[p.document_id]
                        done[p.document_id] = Document(
                            p.document_id,
                            text,
                            p.subtopic_ids,
                            p.insight_ids,
                            attempt,
                            len(text.split()),
                        )
                        continue
                    feedback[p.document_id] = inclusion.reason()
                else:
                    feedback[p.document_id] = f"inclusion check failed: {verdict.error}"
            if attempt == settings.document_attempts:
                result.drop(
                    "document",
                    p.document_id,
                    "inclusion",
                    "failed_verification",
                    feedback[p.document_id],
                )
            else:
                retry.append(p)
        pending = retry
        if not pending:
            break
    return [done[p.document_id] for p in plans if p.document_id in done]


def _queries(
    client: LLMClient, result: Synthesis, base: dict[str, Any], subtopics: list[Subtopic]
) -> list[Subtopic]:
    answer = client.ask(
        Ask(
            "summhay/queries",
            {**base, "subtopics": _subtopic_vars(subtopics)},
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
