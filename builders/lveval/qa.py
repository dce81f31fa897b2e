"""QA items from drafts: quotes located in their passages, answers checked against evidence."""

from __future__ import annotations

import re
from collections.abc import Mapping

from builders.lveval.answers import QuestionDraft
from builders.lveval.records import Evidence, Passage, QAItem, stable_id
from builders.lveval.text import mentions


def locate(passage: Passage, quote: str) -> tuple[int, int] | None:
    """Offsets of ``quote`` in the passage: verbatim, else ignoring whitespace differences."""
    quote = quote.strip()
    at = passage.text.find(quote)
    if at >= 0:
        return at, at + len(quote)
    pattern = r"\s+".join(re.escape(w) for w in quote.split())
    match = re.search(pattern, passage.text) if pattern else None
    return (match.start(), match.end()) if match else None


def to_item(
    draft: QuestionDraft,
    passages: Mapping[str, Passage],
    *,
    dataset: str,
    source: str,
    language: str = "en",
) -> QAItem | tuple[str, str]:
    """A QA item, or ``(reason, detail)`` when the draft fails a check."""
    answers = tuple(dict.fromkeys(a.strip() for a in draft.answers if a.strip()))
    if not answers:
        return "no_answer", draft.question
    spans = []
    for quote in draft.evidence:
        passage = passages.get(quote.passage_id)
        found = locate(passage, quote.quote) if passage else None
        if passage is None or found is None:
            return "evidence_not_found", f"{quote.passage_id}: {quote.quote[:80]}"
        spans.append(Evidence(passage.passage_id, found[0], found[1], passage.text[slice(*found)]))
    spans = list(dict.fromkeys(spans))
    if draft.hops > 1 and len(spans) < 2:
        return "multi_hop_single_evidence", draft.question
    evidence = " ".join(e.text for e in spans)
    for answer in answers:
        if not mentions(evidence, answer, language):
            return "answer_not_in_evidence", f"{answer!r} not in the quoted evidence"
    qa_id = stable_id("qa", dataset, source, draft.question.strip(), answers[0])
    keywords = draft.answer_keywords.strip() or answers[0]
    return QAItem(
        qa_id, dataset, language, source, draft.hops, draft.question.strip(), answers, keywords,
        tuple(spans),
    )  # fmt: skip
