"""Steps 6-7 of SummHay synthesis: write each planned document, check it both ways against every
insight of the haystack, and regenerate a failing one with the reason."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from builders.summhay.answers import InclusionAnswer, min_words
from builders.summhay.records import Document, Insight, PlannedDocument
from builders.summhay.responders import STYLES
from builders.summhay.settings import SummhaySettings
from builders.summhay.verify import check_inclusion
from pipelines.llm import Ask, Limits, LLMClient, Outcome, TextAnswer
from pipelines.synthesis.summhay_outcome import Synthesis


@dataclass
class _Briefs:
    """What each planned document is written as (by document id), and the reason its last
    attempt failed."""

    voice: dict[str, str]
    style: dict[str, str]
    feedback: dict[str, str]


def _briefs(result: Synthesis, plans: list[PlannedDocument], rng: random.Random) -> _Briefs:
    """A seeded voice (a participant) and style (of the topic's domain) for every document."""
    voices = list(result.topic.participants) or ["Staff reporter"]
    voice = {p.document_id: voices[rng.randrange(len(voices))] for p in plans}
    styles = STYLES[result.topic.domain]
    style = {p.document_id: styles[rng.randrange(len(styles))] for p in plans}
    return _Briefs(voice, style, {p.document_id: "" for p in plans})


def _write(
    client: LLMClient,
    base: dict[str, Any],
    pending: list[PlannedDocument],
    briefs: _Briefs,
    by_id: dict[str, Insight],
    settings: SummhaySettings,
    attempt: int,
) -> dict[str, str]:
    """The text of each pending document written at ``attempt`` (by document id); a failed
    one's reason becomes its feedback."""
    least = max(20, int(settings.words_per_document * settings.min_document_words))
    asks = [
        Ask(
            "summhay/document",
            {
                **base,
                "document_id": p.document_id,
                "voice": briefs.voice[p.document_id],
                "style": briefs.style[p.document_id],
                "words": settings.words_per_document,
                "insights": [by_id[i].text for i in p.insight_ids],
                "feedback": briefs.feedback[p.document_id],
            },
            TextAnswer,
            min_words(least),
        )
        for p in pending
    ]
    written = list(client.ask_many(asks, f"summhay: documents (try {attempt})", len(asks)))
    for p, o in zip(pending, written, strict=True):
        if not o.ok:
            briefs.feedback[p.document_id] = o.error
    return {p.document_id: o.value.text for p, o in zip(pending, written, strict=True) if o.ok}


def _check(
    client: LLMClient,
    pending: list[PlannedDocument],
    texts: dict[str, str],
    insights: list[Insight],
) -> Iterator[Outcome[Any]]:
    """The inclusion verdicts (which of the haystack's insights each written document holds),
    in the order of ``pending``, for the documents in ``texts``."""
    checks = [
        inclusion_ask(texts[p.document_id], insights) for p in pending if p.document_id in texts
    ]
    return iter(client.ask_many(checks, "summhay: inclusion", len(checks)))


def inclusion_ask(document: str, insights: Sequence[Insight]) -> Ask[InclusionAnswer]:
    """Which of ``insights`` (all of a haystack's) ``document`` states."""
    ids = [i.insight_id for i in insights]
    return Ask(
        "summhay/inclusion",
        {
            "document": document,
            "insights": [{"insight_id": i.insight_id, "text": i.text} for i in insights],
        },
        InclusionAnswer,
        limits=Limits(enums={"present": ids}, max_items={"present": len(ids)}),
    )


def _verified(
    plan: PlannedDocument,
    text: str,
    verdict: Outcome[Any],
    by_id: dict[str, Insight],
    attempt: int,
) -> Document | str:
    """The document when the verdict finds exactly its insights; the reason otherwise."""
    if not verdict.ok:
        return f"inclusion check failed: {verdict.error}"
    inclusion = check_inclusion(plan.insight_ids, verdict.value.present, by_id)
    if not inclusion.ok:
        return inclusion.reason()
    return Document(
        plan.document_id, text, plan.subtopic_ids, plan.insight_ids, attempt, len(text.split())
    )


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
    briefs = _briefs(result, plans, rng)
    pending = list(plans)
    done: dict[str, Document] = {}
    for attempt in range(1, settings.document_attempts + 1):
        texts = _write(client, base, pending, briefs, by_id, settings, attempt)
        verdicts = _check(client, pending, texts, insights)
        retry = []
        for p in pending:
            if p.document_id in texts:
                made = _verified(p, texts[p.document_id], next(verdicts), by_id, attempt)
                if isinstance(made, Document):
                    done[p.document_id] = made
                    continue
                briefs.feedback[p.document_id] = made
            if attempt == settings.document_attempts:
                reason = briefs.feedback[p.document_id]
                result.drop("document", p.document_id, "inclusion", "failed_verification", reason)
            else:
                retry.append(p)
        pending = retry
        if not pending:
            break
    return [done[p.document_id] for p in plans if p.document_id in done]
