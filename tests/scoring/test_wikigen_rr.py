"""The ``wikigenbench_rr`` task's requests and scores, without Inspect: the same functions, in
the same order, as the toolkit's RR scoring."""

from __future__ import annotations

import json

import pytest

from benchsmith_scoring import wikigen_judges as judges
from benchsmith_scoring.leval.metrics import rouge
from benchsmith_scoring.wikigen import article_claims, citation_scores
from benchsmith_scoring.wikigen_rr import CITATION_METRICS, METRICS, Article, reply_schema, score

ROW = {
    "title": "2026 Lakeside flood",
    "reference": "The Lakeside flood hit in May 2026. Thousands left their homes.",
    # published out of order: n decides the numbering
    "documents": [
        {"n": 2, "chunk_id": "c2", "text": "Thousands were evacuated."},
        {"n": 1, "chunk_id": "c1", "text": "The flood began on 3 May 2026."},
    ],
}
TEXT = """ ==Background==
The flood began in May 2026.[1] Thousands left.[2][7]
==Aftermath==
Rebuilding started.[1, 2]
"""
JUDGE_REPLIES = [
    "Fluency: 4, Informativeness: 3, Faithfulness: 5",
    "no score here",
    json.dumps({"feedback": "Clear.", "score": 4}),
    "Focused. [RESULT] 9",
    "Broad enough. [RESULT] 3",
]


def test_requests_judge_every_known_citation_in_order_then_each_judge() -> None:
    article = Article.of(ROW, TEXT)
    assert article.claims == article_claims(TEXT.strip(), ["c1", "c2"])
    kinds = [(r.kind, r.claim) for r in article.requests()]
    assert kinds == [
        ("entails", 0), ("entails", 1), ("entails", 2), ("entails", 2),
        ("fluency", -1), ("outline", -1), ("organization", -1), ("focus", -1), ("coverage", -1),
    ]  # fmt: skip
    first = article.requests()[0]
    assert first.variables == {
        "premise": ROW["documents"][1]["text"],
        "claim": "The flood began in May 2026.",
    }
    judged = article.requests()[4]
    assert judged.prompt == "wikigen/quality"
    assert judged.variables == judges.judge_variables(ROW["title"], TEXT.strip())["fluency"]


def test_scores_are_the_toolkits_functions_on_the_verdicts_and_failures_stay_out() -> None:
    article = Article.of(ROW, TEXT)
    entails = ['{"entails": true}', '{"entails": "no"}', '{"entails": "yes"}', '{"entails": 1}']
    found = score(article, entails + JUDGE_REPLIES)
    assert found["verdicts"] == [True, False, True, True]
    # "[7]" names no shown document: it is kept and never supports
    assert found["supported"] == [[True], [False, False], [True, True]]
    cites = citation_scores(article.claims, found["supported"])
    assert found["scores"] == {
        "rouge_l": rouge(TEXT.strip(), ROW["reference"], stem=True).rougeL,
        "citation_recall": cites.recall,
        "citation_precision": cites.precision,
        "citation_rate": cites.rate,
        "fluency_score": 4,
        "info_score": 3,
        "outline_score": None,
        "organization_score": 4,
        "focus_score": None,
        "coverage_score": 3,
    }
    assert list(found["scores"]) == list(METRICS)
    assert [f["score"] for f in found["failed"]] == ["outline", "focus"]
    assert "outside 1-5" in found["failed"][1]["reason"]
    with pytest.raises(ValueError, match="3 replies for 9 requests"):
        score(article, entails[:3])


def test_a_citation_verdict_that_failed_leaves_the_citation_scores_out_not_unsupported() -> None:
    article = Article.of(ROW, TEXT)
    entails = ['{"entails": true}', '{"entails": "no"}', "garbled", '{"entails": 1}']
    found = score(article, entails + JUDGE_REPLIES)
    assert found["verdicts"] == [True, False, None, True]
    assert found["supported"] == [[True], [False, False], [None, True]]
    citations = {k: found["scores"][k] for k in CITATION_METRICS}
    assert citations == dict.fromkeys(CITATION_METRICS)  # None: left out of the means
    assert found["scores"]["rouge_l"] == rouge(TEXT.strip(), ROW["reference"], stem=True).rougeL
    assert found["scores"]["fluency_score"] == 4  # the other scores stand
    reasons = {f["score"]: f["reason"] for f in found["failed"]}
    assert set(reasons) == {*CITATION_METRICS, "outline", "focus"}
    assert reasons["citation_recall"] == "1 entailment replies held no verdict"


@pytest.mark.parametrize("judge", ["fluency", "outline", "organization"])
def test_a_reply_in_the_asked_schema_is_read_by_the_judges_reader(judge: str) -> None:
    schema = reply_schema(judge)
    reply = {
        name: 3 if spec["type"] == "integer" else "ok"
        for name, spec in schema["properties"].items()
    }
    values = judges.read_scores(judge, json.dumps(reply))
    assert set(values.values()) == {3} and values
    assert all(
        spec.get("maximum") == 5
        for spec in schema["properties"].values()
        if spec["type"] == "integer"
    )
