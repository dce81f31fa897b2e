"""Position variants and SummHay's public JSON layout, from one small haystack."""

from __future__ import annotations

import random

from builders.summhay.official import to_official
from builders.summhay.records import Document, Haystack, Insight, Subtopic, Topic
from builders.summhay.variants import orders, relevant_documents


def haystack() -> Haystack:
    docs = [
        Document("D1", "one", ("S1", "S2"), ("S1.1", "S2.1"), 1, 1),
        Document("D2", "two", ("S2",), ("S2.1",), 1, 1),
        Document("D3", "three", ("S2",), ("S2.2",), 2, 1),
        Document("D4", "four", ("S1",), ("S1.1",), 1, 1),
        Document("D5", "five", ("S2",), ("S2.2",), 1, 1),
    ]
    return Haystack(
        Topic("t1", "conversation", "Friends plan a trip", ("Ana", "Bo")),
        (
            Subtopic("S1", "Budget", "money", "What about money?"),
            Subtopic("S2", "Route", "roads", "Which way?"),
        ),
        (
            Insight("S1.1", "S1", "Ana says 300 euros."),
            Insight("S2.1", "S2", "Bo says 12 stops."),
            Insight("S2.2", "S2", "Ana says route 9."),
        ),
        tuple(docs),
    )


def test_positions_place_the_relevant_documents() -> None:
    h = haystack()
    rows = list(orders(h, random.Random(1)))
    assert len(rows) == 2 * 4
    by = {(s, p): ids for s, p, ids in rows}
    relevant = set(relevant_documents(h, "S1"))
    assert relevant == {"D1", "D4"}
    assert set(by["S1", "top"][:2]) == relevant
    assert set(by["S1", "bottom"][-2:]) == relevant
    middle = by["S1", "middle"]
    assert set(middle[1:3]) == relevant and middle[0] not in relevant and middle[-1] not in relevant
    for ids in by.values():
        assert sorted(ids) == ["D1", "D2", "D3", "D4", "D5"]
    # the random order is the same for every subtopic: it is the haystack's order
    assert by["S1", "random"] == by["S2", "random"]


def test_official_layout_has_summhay_fields_and_gold() -> None:
    h = haystack()
    data = to_official(h)
    assert set(data) == {"topic_id", "topic", "topic_metadata", "subtopics", "documents"}
    assert data["topic_metadata"] == {"participants": ["Ana", "Bo"]}
    sub = data["subtopics"][1]
    assert set(sub) == {"subtopic_id", "subtopic_name", "subtopic", "query", "insights"}
    assert set(sub["insights"][0]) == {"insight_id", "insight_name", "insight"}
    doc = data["documents"][0]
    assert set(doc) == {"document_id", "document_text", "document_metadata", "insights_included"}
    gold = {d["document_id"] for d in data["documents"] if "S2.2" in d["insights_included"]}
    assert gold == set(h.gold("S2.2")) == {"D3", "D5"}


def test_row_round_trip_keeps_the_haystack() -> None:
    h = haystack()
    assert Haystack.from_row(h.to_row()) == h
