"""SummHay's public JSON layout (one file per haystack), so its released scripts read ours.

Layout (SummHay's README and what its scripts read): ``{topic_id, topic,
topic_metadata{participants[] | articles[]}, subtopics[{subtopic_id, subtopic_name, subtopic,
query, insights[{insight_id, insight_name, insight}], retriever{name: {document_id: score}},
summaries{key: [line, ...]}, eval_summaries{key: [{insight_id, coverage, bullet_id}]}}],
documents[{document_id, document_text, document_metadata, insights_included[]}]}``.

- ``retriever`` is read by ``populate_summaries.py --retrieval_summ`` (every retriever listed) and
  its ``full_summ_*`` orders (``oracle``); the oracle score is the number of the subtopic's
  insights a document carries, as ``utils_topic.load_topic`` labels it.
- ``summaries`` and ``eval_summaries`` must exist on every subtopic for
  ``utils_eval.compute_full_results`` (it indexes both); a summary key is
  ``summary_subtopic_{retriever}_{model}``, with no other underscore, for
  ``compute_2d_rag_results``'s split.
- ``insights_included`` names only the haystack's insights (``load_topic`` fails on others).

The gold of an insight is the documents whose ``insights_included`` holds it; a citation number
is a document's 1-based position in ``documents``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from builders.summhay.records import Haystack
from builders.summhay.retrieval import oracle_scores

NAME_WORDS = 8
COVERAGE_LABEL = {"full": "FULL_COVERAGE", "partial": "PARTIAL_COVERAGE", "none": "NO_COVERAGE"}
"""Our coverage words as SummHay's judge answers them."""

RetrieverScores = Mapping[str, Mapping[str, Sequence[float]]]
"""``{subtopic_id: {retriever: score of each document, in haystack order}}``."""


def insight_name(text: str) -> str:
    """A short name for an insight: its first words."""
    words = text.split()
    return " ".join(words[:NAME_WORDS]) + (" ..." if len(words) > NAME_WORDS else "")


def summary_key(retriever: str, model: str) -> str:
    """SummHay's key of a RAG summary; underscores inside the names become hyphens."""
    return f"summary_subtopic_{retriever.replace('_', '-')}_{model.replace('_', '-')}"


def _retriever(haystack: Haystack, subtopic_id: str, scores: RetrieverScores | None) -> dict:
    by_name = scores.get(subtopic_id, {}) if scores is not None else {}
    if not by_name:
        by_name = {"oracle": oracle_scores(haystack, subtopic_id)}
    ids = [d.document_id for d in haystack.documents]
    return {name: dict(zip(ids, values, strict=True)) for name, values in by_name.items()}


def to_official(haystack: Haystack, retrievers: RetrieverScores | None = None) -> dict[str, Any]:
    """The haystack as SummHay publishes its own, with each subtopic's retriever scores (the
    oracle's when ``retrievers`` has none for it) and no summaries yet."""
    topic = haystack.topic
    key = "participants" if topic.domain == "conversation" else "articles"
    known = {i.insight_id for i in haystack.insights}
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
                "retriever": _retriever(haystack, s.subtopic_id, retrievers),
                "summaries": {},
                "eval_summaries": {},
            }
            for s in haystack.subtopics
        ],
        "documents": [
            {
                "document_id": d.document_id,
                "document_text": d.text,
                "document_metadata": {"subtopic_ids": list(d.subtopic_ids), "words": d.word_count},
                "insights_included": [i for i in d.insight_ids if i in known],
            }
            for d in haystack.documents
        ],
    }


def eval_entry(verdict: Mapping[str, Any]) -> dict[str, Any]:
    """One judge verdict (``insight_id``, ``coverage`` full/partial/none, ``bullet_id`` or
    None) as SummHay's ``eval_summaries`` holds it."""
    bullet = verdict["bullet_id"] if verdict["bullet_id"] is not None else "NA"
    return {
        "insight_id": verdict["insight_id"],
        "coverage": COVERAGE_LABEL[verdict["coverage"]],
        "bullet_id": bullet,
    }


def add_summary(
    official: dict[str, Any],
    subtopic_id: str,
    key: str,
    lines: Sequence[str],
    verdicts: Sequence[Mapping[str, Any]],
) -> None:
    """Record a summary (SummHay's list of lines) and its verdicts under ``key``."""
    subtopic = next(s for s in official["subtopics"] if s["subtopic_id"] == subtopic_id)
    subtopic["summaries"][key] = list(lines)
    subtopic["eval_summaries"][key] = [eval_entry(v) for v in verdicts]
