"""Retrieval for SummHay's RAG setting: rank documents for a subtopic query, fill a token budget,
and bound coverage without a summarizer.

Retrievers score every document of the haystack for the query; documents are taken in score
order (ties in haystack order) while they fit ``budget`` tokens (SummHay: 15,000, for 16k-context
generators). The *coverage bound* of a context is the share of the subtopic's insights with at
least one gold document inside it: no summarizer can cover an insight it never saw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from builders.summhay.records import Haystack


def oracle_scores(haystack: Haystack, subtopic_id: str) -> list[float]:
    """Oracle: the number of the subtopic's insights each document carries."""
    ids = {i.insight_id for i in haystack.insights if i.subtopic_id == subtopic_id}
    return [float(len(ids & set(d.insight_ids))) for d in haystack.documents]


def coverage_bound(haystack: Haystack, subtopic_id: str, context: set[str]) -> tuple[int, int]:
    """``(insights with a gold document in context, insights of the subtopic)``."""
    insights = [i for i in haystack.insights if i.subtopic_id == subtopic_id]
    reachable = sum(1 for i in insights if set(haystack.gold(i.insight_id)) & context)
    return reachable, len(insights)


def bounds_by_retriever(rows: Sequence[Mapping[str, object]]) -> dict[str, float]:
    """Pool ``{retriever, reachable, insights}`` rows into a bound per retriever (x100)."""
    totals: dict[str, list[int]] = {}
    for row in rows:
        t = totals.setdefault(str(row["retriever"]), [0, 0])
        t[0] += int(row["reachable"])  # type: ignore[call-overload]
        t[1] += int(row["insights"])  # type: ignore[call-overload]
    return {name: 100 * r / n if n else 0.0 for name, (r, n) in sorted(totals.items())}
