"""WikiGenBench's writing and informativeness judges: the paper's reply formats, structured
answers, failed scores with their reasons, and the template stand-ins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchsmith_scoring import prompts
from benchsmith_scoring import wikigen_judges as paper
from builders.wikigen.responders import responders
from pipelines.evaluation.wikigen import average_articles
from pipelines.evaluation.wikigen_judges import Judged, judge_articles, judge_asks
from pipelines.llm import LLMClient
from tests.pipelines.llm.conftest import settings_for
from tests.support.openai_server import openai_server

ARTICLE = (
    "==Background==\nThe 2026 Lake Ohrid earthquake struck North Macedonia on 3 May.[1]\n"
    "==Response==\nRescue teams from Albania arrived within hours.[2][3] Ohrid reopened.[1]\n"
)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Fluency: 4, Informativeness: 3, Faithfulness: 5", (4, 3, 5)),
        ("Fluency: Score 5, Informativeness: Score 2, Faithfulness: Score 0", (5, 2, 0)),
        ("fluency:3\ninformativeness: 4", (3, 4, None)),
        ('{"fluency": 2, "informativeness": 1, "faithfulness": 4}', (2, 1, 4)),
    ],
)
def test_the_fluency_reply_is_read_as_the_prompt_asks(reply: str, expected: tuple) -> None:
    found = paper.read_quality(reply)
    assert (found["fluency"], found["info"], found["faithfulness"]) == expected


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("The text reads well.", "no 'Fluency: N'"),
        ("Fluency: 4", "no 'Informativeness: N'"),
        ("Fluency: 7, Informativeness: 3", "fluency: 7 is outside 0-5"),
        ("Fluency: 4.5, Informativeness: 3", "'4.5' is not a whole number"),
        ('{"fluency": "high", "informativeness": 3}', "'high' is not a whole number"),
    ],
)
def test_an_unreadable_fluency_reply_says_why(reply: str, reason: str) -> None:
    with pytest.raises(paper.ScoreError, match=reason):
        paper.read_quality(reply)


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("The feedback. [RESULT] 4", 4),
        ("Feedback: organised but thin [RESULT] (2)", 2),
        ("Well structured overall. Score: 5/5", 5),
        ("The overall [RESULT] 3 out of 5", 3),
        ('{"feedback": "ok", "score": 1}', 1),
    ],
)
def test_a_prometheus_grade_is_read_as_prometheus_eval_reads_it(reply: str, score: int) -> None:
    assert paper.read_rubric(reply)[1] == score


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Good article, I would say 4, and then more text.", r"no '\[RESULT\] N'"),
        ("Feedback. [RESULT] 0", "outside 1-5"),
        ("Feedback. [RESULT] 6", "outside 1-5"),
    ],
)
def test_a_prometheus_reply_without_a_grade_says_why(reply: str, reason: str) -> None:
    with pytest.raises(paper.ScoreError, match=reason):
        paper.read_rubric(reply)


def test_outline_replies_and_what_every_judge_reads() -> None:
    assert paper.read_outline("4") == 4 and paper.read_outline("Score: 3/5") == 3
    with pytest.raises(paper.ScoreError, match="outside 0-5"):
        paper.read_outline("9")
    with pytest.raises(paper.ScoreError, match="no score"):
        paper.read_outline("A fine outline.")
    variables = paper.judge_variables("2026 Lake Ohrid earthquake", ARTICLE)
    # the judges read the article without its citation marks, headings kept
    assert "[1]" not in variables["fluency"]["article"]
    assert (
        "==Response==\nRescue teams from Albania arrived within hours."
        in (variables["fluency"]["article"])
    )
    assert variables["outline"]["headings"] == ["Background", "Response"]
    focus = prompts.messages(paper.RUBRIC_PROMPT, variables["focus"])
    assert focus[0]["role"] == "system" and "fair judge assistant" in focus[0]["content"]
    user = focus[1]["content"]
    assert "write a wikipedia page for the topic: 2026 Lake Ohrid earthquake" in user
    assert "[Relevance and Focus: Does the article stay on topic" in user
    assert "Reference Answer" not in user  # graded without one, as STORM's rubric grading
    assert user.count("\nScore ") == 5 and user.endswith("###Feedback:")
    outline = prompts.messages(paper.OUTLINE_PROMPT, {"title": "T", "headings": []})
    assert outline[0]["content"].endswith("(no sections)")
    # Fluency and Info share one call
    assert paper.judges(["info", "fluency", "coverage"]) == ["fluency", "coverage"]


def _judge(body: dict[str, Any], n: int) -> str:
    prompt = body["messages"][-1]["content"]
    if "Evaluate an encyclopedia text" in prompt:
        if "Quiet" in prompt:
            return "Fluency: 9, Informativeness: 3, Faithfulness: 5"  # out of range
        return "Fluency: 4, Informativeness: 2, Faithfulness: 5"
    if "quality of the outline" in prompt:
        return "3"
    if "Broad Coverage" in prompt:
        return "It covers little, no grade given."  # never a score
    return "Organised and focused. [RESULT] 4"


def test_a_failed_score_is_kept_with_its_reason_and_the_others_stand(tmp_path: Path) -> None:
    articles = [
        Judged("2026 Lake Ohrid earthquake", ARTICLE),
        Judged("Quiet storm", "==Overview==\nA quiet storm passed.[1]\n", ["Overview", "Impact"]),
    ]
    with openai_server(_judge) as (url, seen):
        client = LLMClient.from_settings(settings_for(url, tmp_path, reasks=0))
        judged = judge_articles(client, articles, list(paper.SCORES))
    assert seen.count == 2 * 5  # one Fluency-and-Info call, outline, three rubric grades
    first, quiet = judged
    assert first.scores == {
        "fluency_score": 4,
        "info_score": 2,
        "outline_score": 3,
        "organization_score": 4,
        "focus_score": 4,
        "coverage_score": None,
    }
    assert [f["score"] for f in first.failed] == ["coverage"]
    assert "no '[RESULT] N' at the end" in first.failed[0]["reason"]
    # the out-of-range fluency fails both scores of its call, never as 0
    assert quiet.scores["fluency_score"] is None and quiet.scores["info_score"] is None
    assert quiet.scores["organization_score"] == 4
    reasons = {f["score"]: f["reason"] for f in quiet.failed}
    assert "fluency: 9 is outside 0-5" in reasons["fluency"] and reasons.keys() == {
        "fluency",
        "info",
        "coverage",
    }
    # a PRR article's planned outline is what the outline judge reads
    outline_prompts = [b["messages"][-1]["content"] for b in seen.bodies]
    assert any("1. Overview\n2. Impact" in p for p in outline_prompts)
    rows = [
        {"method": "rr", "retriever": "bm25", "status": "ok", "failed_scores": j.failed}
        | dict.fromkeys(("citation_recall", "citation_precision", "citation_rate", "rouge_l"), 0.5)
        | {"words": 10, "sections": 2}
        | j.scores
        for j in judged
    ]
    means = average_articles(rows, list(paper.SCORES))["rr"]["bm25"]
    assert means["fluency_score"] == 4.0 and means["organization_score"] == 4.0
    assert means["coverage_score"] is None
    assert means["coverage_score_failed"] == 2
    assert means["fluency_score_failed"] == 1


def test_structured_output_sends_bounded_integers(tmp_path: Path) -> None:
    def structured(body: dict[str, Any], n: int) -> str:
        schema = body["response_format"]["json_schema"]["schema"]
        if "fluency" in schema["properties"]:
            return json.dumps({"fluency": 5, "informativeness": 4, "faithfulness": 3})
        if "feedback" in schema["properties"]:
            return json.dumps({"feedback": "Fine.", "score": 2})
        return json.dumps({"score": 1})

    with openai_server(structured) as (url, seen):
        settings = settings_for(url, tmp_path, response_format="json_schema", reasks=0)
        client = LLMClient.from_settings(settings)
        (judged,) = judge_articles(client, [Judged("T", ARTICLE)], ["info", "focus", "outline"])
    assert judged.scores == {"info_score": 4, "focus_score": 2, "outline_score": 1}
    assert judged.failed == []
    schemas = [b["response_format"]["json_schema"]["schema"] for b in seen.bodies]
    quality = next(s for s in schemas if "fluency" in s["properties"])
    assert quality["properties"]["fluency"].items() >= {"minimum": 0, "maximum": 5}.items()
    grade = next(s for s in schemas if "feedback" in s["properties"])
    assert grade["properties"]["score"]["minimum"] == 1
    assert grade["properties"]["score"]["maximum"] == 5


def test_the_template_stand_ins_are_deterministic_and_in_range() -> None:
    answer = responders()
    asked = judge_asks("2026 Lake Ohrid earthquake", ARTICLE, list(paper.SCORES))
    found: dict[str, int] = {}
    for judge, ask in asked:
        reply = answer[ask.prompt](ask.variables)
        assert reply == answer[ask.prompt](ask.variables)
        found |= paper.read_scores(judge, reply)
    assert found.keys() == set(paper.SCORES)
    for name, value in found.items():
        low, high = paper.BOUNDS[name]
        assert low <= value <= high
    # two of three sentences have 5 to 40 words ("Ohrid reopened." has 2): round(5 * 2 / 3);
    # two headings: an outline point each, organization 1 + 1
    assert found["fluency"] == 3 and found["outline"] == 2 and found["organization"] == 2
