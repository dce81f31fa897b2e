"""Position variants and SummHay's public JSON layout, from one small haystack."""

from __future__ import annotations

import random
from dataclasses import replace

from benchsmith_scoring.summhay import split_lines
from builders.summhay.official import add_summary, summary_key, to_official
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


def test_official_layout_has_what_summhays_scripts_read() -> None:
    h = haystack()
    data = to_official(h)
    assert set(data) == {"topic_id", "topic", "topic_metadata", "subtopics", "documents"}
    assert data["topic_metadata"] == {"participants": ["Ana", "Bo"]}
    sub = data["subtopics"][1]
    assert set(sub) == {
        "subtopic_id",
        "subtopic_name",
        "subtopic",
        "query",
        "insights",
        "retriever",  # populate_summaries.py --retrieval_summ, full_summ_sorted (oracle)
        "summaries",  # utils_eval.compute_full_results indexes both on every subtopic
        "eval_summaries",
    }
    assert set(sub["insights"][0]) == {"insight_id", "insight_name", "insight"}
    # the oracle: how many of the subtopic's insights each document carries (load_topic's label)
    assert sub["retriever"] == {"oracle": {"D1": 1.0, "D2": 1.0, "D3": 1.0, "D4": 0.0, "D5": 1.0}}
    assert sub["summaries"] == {} and sub["eval_summaries"] == {}
    doc = data["documents"][0]
    assert set(doc) == {"document_id", "document_text", "document_metadata", "insights_included"}
    gold = {d["document_id"] for d in data["documents"] if "S2.2" in d["insights_included"]}
    assert gold == set(h.gold("S2.2")) == {"D3", "D5"}


def test_official_layout_names_only_the_haystacks_insights_and_given_retrievers() -> None:
    h = haystack()
    dropped = replace(h, insights=h.insights[:2])  # S2.2 left out, still in D3 and D5
    data = to_official(dropped, {"S1": {"bm25": [0.5, 0, 0, 2.5, 0]}})
    assert [d["insights_included"] for d in data["documents"]] == [
        ["S1.1", "S2.1"],
        ["S2.1"],
        [],
        ["S1.1"],
        [],
    ]
    assert data["subtopics"][0]["retriever"] == {
        "bm25": {"D1": 0.5, "D2": 0, "D3": 0, "D4": 2.5, "D5": 0}
    }
    assert set(data["subtopics"][1]["retriever"]) == {"oracle"}


def test_summaries_and_verdicts_in_summhays_form() -> None:
    data = to_official(haystack())
    verdicts = [
        {"insight_id": "S1.1", "coverage": "full", "bullet_id": 2},
        {"insight_id": "S1.1", "coverage": "none", "bullet_id": None},
    ]
    key = summary_key("bm25", "model_x")
    lines = split_lines("## Budget\n\n- Ana says 300 euros [1][4]\n")
    add_summary(data, "S1", key, lines, verdicts)
    sub = data["subtopics"][0]
    assert key == "summary_subtopic_bm25_model-x"  # one underscore between retriever and model
    assert sub["summaries"][key] == ["## Budget", "- Ana says 300 euros [1][4]"]
    assert sub["eval_summaries"][key] == [
        {"insight_id": "S1.1", "coverage": "FULL_COVERAGE", "bullet_id": 2},
        {"insight_id": "S1.1", "coverage": "NO_COVERAGE", "bullet_id": "NA"},
    ]


def test_row_round_trip_keeps_the_haystack() -> None:
    h = haystack()
    assert Haystack.from_row(h.to_row()) == h
