"""SummHay's RAG evaluation: what the summarizer is shown, how a system's scores are pooled, and
SummHay's layout of our results. Expected values are worked out by hand from SummHay's released
code (``utils_eval.compute_full_results`` pools; ``populate_summaries.summarize`` labels
documents by haystack position)."""

from __future__ import annotations

from typing import Any

import pytest

from benchsmith_scoring.summhay import Verdict, parse_summary, score_insights, summarize_scores
from builders.summhay.records import Document, Haystack, Insight, Subtopic, Topic
from pipelines.evaluation.summhay import (
    Context,
    average_scores,
    official_layout,
    summarize_ask,
    verdict_rows,
)
from pipelines.llm.prompts import PromptLibrary


def haystack() -> Haystack:
    docs = tuple(
        Document(f"doc-{c}", f"text {c}", ("S1",), ins, 1, 2)
        for c, ins in [("a", ("i1",)), ("b", ("i1", "i2")), ("c", ()), ("d", ("i2",))]
    )
    return Haystack(
        Topic("t", "news", "A storm", ("Outlet",)),
        (Subtopic("S1", "Damage", "damage", "What was damaged?"),),
        (Insight("i1", "S1", "Roofs fell 3 times."), Insight("i2", "S1", "Bo saw 9 cars.")),
        docs,
    )


def context(h: Haystack, retriever: str, chosen: list[str]) -> Context:
    scores = tuple(
        float(len(chosen) - chosen.index(d.document_id)) if d.document_id in chosen else 0.0
        for d in h.documents
    )
    return Context(h, h.subtopics[0], retriever, chosen, 10, 2, 2, scores)


def test_the_context_labels_documents_by_haystack_position_in_retrieval_order() -> None:
    h = haystack()
    ask = summarize_ask(context(h, "bm25", ["doc-d", "doc-b"]))
    assert ask.variables["documents"] == [
        {"number": 4, "text": "text d"},
        {"number": 2, "text": "text b"},
    ]
    (_, user) = PromptLibrary().messages(ask.prompt, ask.variables)
    assert "Document 4:\ntext d" in user.content and "Document 2:\ntext b" in user.content
    assert "doc-d" not in user.content  # the model sees numbers only, and cites them: [4][2]
    assert "[3][14]" in user.content


def row(retriever: str, summary: str, verdicts: list[Verdict], status: str = "ok") -> dict:
    """A scored row as ``evaluate`` writes it, on the haystack of :func:`haystack`."""
    h = haystack()
    bullets = parse_summary(summary)
    gold = {i.insight_id: set(h.gold(i.insight_id)) for i in h.insights}
    ids = [d.document_id for d in h.documents]
    scores = score_insights(verdicts, bullets, gold, ids)
    base: dict[str, Any] = {"subtopic_id": "S1", "retriever": retriever, "summary": summary}
    if status != "ok":
        return base | {"status": status, "reason": "x", "verdicts": []}
    return (
        base
        | {"status": "ok", "reason": ""}
        | summarize_scores(scores)
        | {
            "unread_citations": sum(b.unread for b in bullets),
            "verdicts": verdict_rows(verdicts, scores),
        }
    )


# gold: i1 in documents 1 and 2, i2 in documents 2 and 4
ROWS = [
    # i1 full by bullet 2 (the header is bullet 1): cites {1, 2}, F1 1; i2 none
    row(
        "bm25",
        "# Damage\n- Roofs fell 3 times [1][2]",
        [Verdict("i1", "full", 2), Verdict("i2", "none", None)],
    ),
    # i1 partial by bullet 1: cites {1}, P 1, R 1/2, F1 2/3; i2 full by bullet 2: cites
    # {2, 3}, P 1/2, R 1/2, F1 1/2
    row(
        "bm25",
        "- Roofs fell [1]\n- Bo saw 9 cars [2, 3] [D04]",
        [Verdict("i1", "partial", 1), Verdict("i2", "full", 2)],
    ),
    # nothing covered: Citation undefined for this summary
    row("bm25", "- Nothing here [3]", [Verdict("i1", "none", None), Verdict("i2", "none", None)]),
    row("bm25", "", [], status="failed"),
]


def test_a_systems_scores_pool_every_insight_and_keep_the_per_summary_means() -> None:
    (scores,) = average_scores(ROWS).values()
    # pooled over 6 insights: coverage (1 + 0 + .5 + 1 + 0 + 0) / 6; joint
    # (1 + 0 + .5 * 2/3 + 1 * 1/2 + 0 + 0) / 6; over the 3 covered: citation (1 + 2/3 + 1/2) / 3
    assert scores["coverage"] == round(100 * 2.5 / 6, 2)  # 41.67
    assert scores["citation"] == round(100 * (1 + 2 / 3 + 1 / 2) / 3, 2)  # 72.22
    assert scores["joint"] == round(100 * (1 + 1 / 3 + 1 / 2) / 6, 2)  # 30.56
    assert scores["citation_precision"] == round(100 * (1 + 1 + 1 / 2) / 3, 2)
    assert scores["citation_recall"] == round(100 * (1 + 1 / 2 + 1 / 2) / 3, 2)
    # per summary: coverage 50, 75, 0 (the same mean: every summary has 2 insights); citation
    # 100, 58.33 (the third covers nothing); joint 50, (1/3 + 1/2) / 2 = 41.67, 0
    assert scores["coverage_per_summary_mean"] == 41.67
    assert scores["citation_per_summary_mean"] == round((100 + 100 * (2 / 3 + 1 / 2) / 2) / 2, 2)
    assert scores["joint_per_summary_mean"] == round((50 + 100 * (1 / 3 + 1 / 2) / 2) / 3, 2)
    assert (scores["summaries"], scores["failed"]) == (3, 1)
    assert (scores["insights_scored"], scores["covered"]) == (6, 3)
    assert scores["unread_citations"] == 1  # [D04]
    assert scores["citation_problems"] == 0


def test_our_results_in_summhays_layout() -> None:
    h = haystack()
    batch = [context(h, "bm25", ["doc-b", "doc-a"]), context(h, "oracle", ["doc-b"])]
    rows = [ROWS[0], ROWS[1] | {"retriever": "oracle"}, ROWS[3] | {"retriever": "dense"}]
    data = official_layout(h, batch, rows, "my_model")
    (sub,) = data["subtopics"]
    assert sub["retriever"] == {
        "bm25": {"doc-a": 1.0, "doc-b": 2.0, "doc-c": 0.0, "doc-d": 0.0},
        "oracle": {"doc-a": 0.0, "doc-b": 1.0, "doc-c": 0.0, "doc-d": 0.0},
    }
    # the failed summary is left out (SummHay scores a key where summaries and eval_summaries
    # both hold it); keys split into retriever and model on their one underscore
    bm25, oracle = "summary_subtopic_bm25_my-model", "summary_subtopic_oracle_my-model"
    assert list(sub["summaries"]) == list(sub["eval_summaries"]) == [bm25, oracle]
    assert sub["summaries"][bm25] == ["# Damage", "- Roofs fell 3 times [1][2]"]
    assert sub["summaries"][oracle] == ["- Roofs fell [1]", "- Bo saw 9 cars [2, 3] [D04]"]
    assert sub["eval_summaries"][oracle] == [
        {"insight_id": "i1", "coverage": "PARTIAL_COVERAGE", "bullet_id": 1},
        {"insight_id": "i2", "coverage": "FULL_COVERAGE", "bullet_id": 2},
    ]
    assert sub["eval_summaries"][bm25][1] == {
        "insight_id": "i2",
        "coverage": "NO_COVERAGE",
        "bullet_id": "NA",
    }


@pytest.mark.parametrize("mode", ["paper", "reference_code"])
def test_metric_modes_agree_when_every_covered_verdict_names_a_bullet(mode: str) -> None:
    h = haystack()
    gold = {i.insight_id: set(h.gold(i.insight_id)) for i in h.insights}
    ids = [d.document_id for d in h.documents]
    bullets = parse_summary("- a [1][2]\n- b [4]")
    verdicts = [Verdict("i1", "full", 1), Verdict("i2", "partial", 2)]
    scores = score_insights(verdicts, bullets, gold, ids, mode=mode)  # type: ignore[arg-type]
    assert [s.f1 for s in scores] == [1.0, pytest.approx(2 / 3)]
