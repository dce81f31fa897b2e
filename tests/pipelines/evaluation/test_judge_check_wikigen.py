"""``benchsmith judge-check`` on WikiGenBench's rubric scores (``wikigen-rubric``): human scores
of articles per dimension against the writing and informativeness judges."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.evaluation.judge_check import (
    LabelFileError,
    check_file,
    print_report,
    read_labels,
)
from pipelines.evaluation.judge_check.agreement import quadratic_kappa, score_agreement, spearman
from tests.pipelines.evaluation.conftest import template, write_jsonl
from tests.pipelines.llm.conftest import settings_for
from tests.support.openai_server import openai_server

# Six short articles of varied quality, scored by hand on Appendix D of the WikiGenBench paper:
# Fluency, Info and Outline on the GPT-4 prompts' 0-5 ("grammatical correctness, coherence of
# ideas, and overall readability"; "depth and breadth of information ... definition,
# background, significance"; "the quality of the outline"), Organization, Focus and Coverage on
# the Prometheus rubric's 1-5, whose wording each comment quotes.
ARTICLES: list[dict[str, Any]] = [
    {
        # Fluency 5: grammatical, with transitions from cause to flood to response.
        # Info 4: background, figures, response and cost, but a short article: not the full
        # "depth and breadth". Outline 5: the headings of an event article, in order.
        # Organization 5: "logically structured with seamless transitions" (chronological).
        # Focus 5: "every piece of information contributing" to the floods.
        # Coverage 4: "hitting on all major points with minimal extraneous information"; the
        # causes and any casualties get a line at most.
        "title": "2023 Porto floods",
        "outline": ["Background", "Flooding", "Response", "Aftermath"],
        "article": (
            "==Background==\n"
            "Porto lies where the Douro meets the Atlantic, and its riverside districts have "
            "flooded in wet winters for centuries.[1] In late November 2023 a slow-moving storm "
            "stalled over northern Portugal.[2]\n"
            "==Flooding==\n"
            "Between 27 and 29 November the Douro rose 6 metres at the Ribeira quay, its highest "
            "level since 2001.[2] Water entered about 400 homes and shops in Ribeira and "
            "Miragaia, and the lower deck of the Luis I Bridge was closed for two days.[3]\n"
            "==Response==\n"
            "The city evacuated 212 residents to schools in Bonfim and Campanha.[3] Civil "
            "protection teams pumped out basements while the government declared a state of "
            "calamity for the riverside parishes.[4]\n"
            "==Aftermath==\n"
            "Damage was estimated at 38 million euros.[4] In 2024 the city council approved a "
            "flood wall for the Ribeira quay and a warning system on the upper Douro dams.[5]\n"
        ),
        "scores": {
            "fluency": 5,
            "info": 4,
            "outline": 5,
            "organization": 5,
            "focus": 5,
            "coverage": 4,
        },
    },
    {
        # Fluency 4: readable, but the Sport section arrives with no transition.
        # Info 3: history, programme figures and reception; no organisers or significance.
        # Outline 3: "Sport" is no heading of a festival's article.
        # Organization 3: "a clear structure is mostly followed with some lapses in coherence".
        # Focus 3: "generally on topic, despite a few unrelated details" (the football club).
        # Coverage 3: "covers most main aspects, though it may stray into minor unnecessary
        # details".
        "title": "Braga Music Festival",
        "article": (
            "==History==\n"
            "The Braga Music Festival was first held in 2009 in the gardens of the Bom Jesus do "
            "Monte sanctuary.[1] It moved to the city's Altice Forum in 2015 as audiences "
            "grew.[2]\n"
            "==Programme==\n"
            "The festival runs for five days each July and mixes fado, jazz and Portuguese "
            "rock.[2] The 2022 edition had 38 concerts and sold 41,000 tickets.[3]\n"
            "==Sport==\n"
            "Braga is also home to Sporting Clube de Braga, which plays at a stadium cut into a "
            "quarry and finished fourth in the 2022 league.[4]\n"
            "==Reception==\n"
            "Critics praised the 2022 programme for its young performers, although residents "
            "complained about noise near the forum.[5]\n"
        ),
        "scores": {
            "fluency": 4,
            "info": 3,
            "outline": 3,
            "organization": 3,
            "focus": 3,
            "coverage": 3,
        },
    },
    {
        # Fluency 2: choppy fragments and a comma-spliced run-on sentence.
        # Info 2: a few facts (fee, date, turnout), no background or significance.
        # Outline 0: there is no outline at all.
        # Organization 1: "disorganized; lacks logical structure and coherence" (the events
        # are told out of order). Focus 4: every sentence is about the protest, but not
        # "tightly centered" on a comprehensive picture. Coverage 2: "includes some of the
        # topic's main aspects but misses others".
        "title": "2024 Coimbra tuition protests",
        "article": (
            "Students protested. Tuition at the University of Coimbra rose to 1,250 euros in "
            "2024.[1] The rector met them in October, the march was on 3 October, about 3,000 "
            "students, it went to the Paco das Escolas.[2] Fees had been frozen since 2019. "
            "Some professors supported it. Police said it was peaceful.[3] The government "
            "later said fees would be reviewed.\n"
        ),
        "scores": {
            "fluency": 2,
            "info": 2,
            "outline": 0,
            "organization": 1,
            "focus": 4,
            "coverage": 2,
        },
    },
    {
        # Fluency 4: clean sentences, though nothing ties them to the topic.
        # Info 1: a single sentence is about the expansion. Outline 1: the headings of a city's
        # article, not of an airport expansion. Organization 3: the city-history structure is
        # "mostly followed", with the airport tacked on. Focus 1: "off-topic; the content does
        # not align with the headline". Coverage 1: "severely lacking".
        "title": "2022 Faro airport expansion",
        "article": (
            "==Introduction==\n"
            "Faro is the capital of the Algarve region in southern Portugal.[1] The city was a "
            "Roman settlement called Ossonoba and later became a Moorish town.[2]\n"
            "==History==\n"
            "King Afonso III took Faro in 1249.[2] The cathedral was built on the site of a "
            "mosque and was damaged in the 1755 earthquake.[3]\n"
            "==Tourism==\n"
            "Beaches on the Ria Formosa islands draw visitors each summer.[4] The airport "
            "opened a new terminal wing in 2022.[5]\n"
        ),
        "scores": {
            "fluency": 4,
            "info": 1,
            "outline": 1,
            "organization": 3,
            "focus": 1,
            "coverage": 1,
        },
    },
    {
        # Fluency 1: ungrammatical ("the tram go", "it have many stop") and repetitive.
        # Info 1: two facts (the ends of the line, the 1995 trams). Outline 3: Introduction,
        # Route, Trams is a fair but thin plan (no history or operations). Organization 2: "a
        # basic structure is present but not consistently followed" (each section repeats the
        # others). Focus 4: all about the line, repetition rather than digression. Coverage 2:
        # "partial coverage": route and vehicles only.
        "title": "Lisbon tram line 15",
        "article": (
            "==Introduction==\n"
            "Tram line 15 is a tram line in Lisbon and it is a tram. The tram go from Praca da "
            "Figueira to Alges and it go along the river.[1] It is a tram line that is long.\n"
            "==Route==\n"
            "The route is route of the tram, it have many stop. The tram use new articulated "
            "trams since 1995.[2] Many stop is near Belem.\n"
            "==Trams==\n"
            "The trams is modern trams. The trams is modern.[2]\n"
        ),
        "scores": {
            "fluency": 1,
            "info": 1,
            "outline": 3,
            "organization": 2,
            "focus": 4,
            "coverage": 2,
        },
    },
    {
        # A stub, scored on three dimensions only. Info 1: one fact. Outline 1: a lone
        # Introduction heading is an outline in name only. Coverage 1: "offers little to no
        # coverage of the topic's primary aspects".
        "title": "Evora Museum reopening",
        "article": (
            "==Introduction==\nThe Evora Museum reopened on 14 May 2024 after a two-year "
            "renovation.[1]\n"
        ),
        "scores": {"info": 1, "outline": 1, "coverage": 1},
    },
]


def rubric_lines() -> list[dict[str, Any]]:
    """ARTICLES as JSONL labels, one per article and dimension, ids ``a<k>-<dimension>``."""
    lines = []
    for k, a in enumerate(ARTICLES, 1):
        inputs = {"title": a["title"], "article": a["article"]}
        if "outline" in a:
            inputs["outline"] = a["outline"]
        for dim, score in a["scores"].items():
            lines.append(
                {
                    "id": f"a{k}-{dim}",
                    "judge": "wikigen-rubric",
                    "inputs": inputs,
                    "dimension": dim,
                    "label": score,
                }
            )
    return lines


LABELS = 33  # 5 articles x 6 dimensions + 3
CALLS = 28  # per article: Fluency-and-Info, Outline, 3 Prometheus grades; the stub: 3


# ---- the statistics --------------------------------------------------------------------------


def test_spearman_and_quadratic_kappa_match_scipy_and_sklearn() -> None:
    stats = pytest.importorskip("scipy.stats")
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(3)
    for n, (low, high) in ((6, (0, 5)), (40, (1, 5)), (300, (0, 5))):
        human = [rng.randint(low, high) for _ in range(n)]
        judge = [min(high, max(low, h + rng.choice((-2, -1, 0, 0, 1)))) for h in human]
        scale = list(range(low, high + 1))
        assert spearman(human, judge) == pytest.approx(stats.spearmanr(human, judge).statistic)
        assert quadratic_kappa(human, judge) == pytest.approx(
            metrics.cohen_kappa_score(human, judge, weights="quadratic", labels=scale)
        )


def test_kappa_counts_distance_over_the_whole_scale() -> None:
    # scores 1, 3, 5 only: the distance 1 -> 5 is 4 points, not 2 label positions
    human, judge = [1, 3, 5, 5], [1, 5, 3, 5]
    # observed (0 + 4 + 4 + 0) / 4 = 2; expected: human {1: 1, 3: 1, 5: 2}, judge the same,
    # sum of counts x (a - b)^2 = 1*1*4 + 1*2*16 + 1*1*4 + 1*2*4 + 2*1*16 + 2*1*4 = 88, / 16
    # = 5.5; kappa = 1 - 2 / 5.5 = 7/11
    assert quadratic_kappa(human, judge) == pytest.approx(7 / 11)


def test_undefined_figures_are_null_with_a_note() -> None:
    constant = score_agreement([3, 3, 3], [2, 3, 4], (1, 5))
    assert constant["spearman"] is None
    assert constant["notes"] == ["Spearman's rho is undefined: the human scores are all 3"]
    assert constant["quadratic_kappa"] == 0.0  # the judge varies, the human does not: chance
    both = score_agreement([4, 4], [4, 4], (1, 5))
    assert both["quadratic_kappa"] is None and both["exact"] == 1.0 and both["bias"] == 0.0
    assert both["notes"] == [
        "Spearman's rho is undefined: the human scores are all 4",
        "Spearman's rho is undefined: the judge scores are all 4",
        "quadratic kappa is undefined: human and judge both give 4",
    ]
    empty = score_agreement([], [], (0, 5))
    assert (empty["n"], empty["exact"], empty["spearman"], empty["bias"]) == (0, None, None, None)
    assert empty["notes"] == ["no answered labels: nothing to compare"]
    assert empty["confusion"]["labels"] == [0, 1, 2, 3, 4, 5]
    for report in (constant, both, empty):
        json.dumps(report, allow_nan=False)  # null, never NaN


# ---- reading ---------------------------------------------------------------------------------


def test_rubric_labels_are_read_with_their_articles(tmp_path: Path) -> None:
    labels = read_labels(write_jsonl(tmp_path / "rubric.jsonl", rubric_lines()))
    assert (labels.judge, len(labels.items)) == ("wikigen-rubric", LABELS)
    first = labels.items[0]
    assert (first.item_id, first.where, first.dimension, first.label) == ("a1-fluency", "line 1",
                                                                          "fluency", 5)  # fmt: skip
    assert first.article.outline == ("Background", "Flooding", "Response", "Aftermath")
    assert labels.items[6].article.outline is None  # its own headings
    assert len({i.article for i in labels.items}) == 6


RUBRIC = {
    "judge": "wikigen-rubric",
    "inputs": {"title": "T", "article": "==Intro==\nText."},
    "dimension": "organization",
    "label": 3,
}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"dimension": "style"}, "dimension: unknown dimension 'style'; one of fluency, info,"),
        ({"dimension": None}, "dimension: required key is missing (one of fluency,"),
        ({"label": 0}, "label: expected a whole number from 1 to 5 for organization (got 0)"),
        ({"label": 6, "dimension": "info"}, "label: expected a whole number from 0 to 5 for info"),
        ({"label": 4.5}, "label: expected a whole number from 1 to 5 for organization (got 4.5)"),
        ({"label": "4"}, "label: expected a whole number from 1 to 5 for organization (got '4')"),
        ({"label": True}, "label: expected a whole number from 1 to 5 for organization (got True)"),
        ({"label": None}, "label: expected a whole number"),
        ({"inputs": {"title": "T"}}, "inputs.article: required key is missing"),
        (
            {"inputs": {"title": "T", "article": "x", "headings": []}},
            "inputs.headings: unknown key",
        ),
        (
            {"inputs": {"title": "T", "article": "x", "outline": "A"}},
            "inputs.outline: Input should",
        ),
        ({"bullet_id": 1}, "bullet_id: only summhay-coverage verdicts name a bullet"),
        ({"dimensions": "focus"}, "dimensions: unknown key"),
    ],
)
def test_a_bad_rubric_line_is_named_with_file_line_and_key(
    tmp_path: Path, change: dict[str, Any], problem: str
) -> None:
    bad = {k: v for k, v in (RUBRIC | change).items() if v is not None or k == "label"}
    path = tmp_path / "rubric.jsonl"
    path.write_text(f"{json.dumps(RUBRIC)}\n\n{json.dumps(bad)}\n", "utf-8")
    with pytest.raises(LabelFileError) as caught:
        read_labels(path)
    assert str(caught.value).startswith(f"{path}:3: ") and problem in str(caught.value)


def test_a_dimension_on_another_judge_is_named(tmp_path: Path) -> None:
    line = {
        "judge": "wikigen-entails",
        "inputs": {"premise": "p", "claim": "c"},
        "label": True,
        "dimension": "focus",
    }
    path = write_jsonl(tmp_path / "labels.jsonl", [line])
    with pytest.raises(LabelFileError, match=r"labels\.jsonl:1: dimension: only wikigen-rubric"):
        read_labels(path)


# ---- the template stand-ins ------------------------------------------------------------------


def test_template_stand_ins_are_checked_per_dimension(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rubric.jsonl", rubric_lines())
    report = check_file(path, template(tmp_path))
    assert (report["items"], report["articles"], report["judge_calls"]) == (LABELS, 6, CALLS)
    assert (report["answered"], report["failed"], report["failures"]) == (LABELS, 0, [])
    assert report["llm"]["asks"] == CALLS  # the labelled dimensions of an article share calls
    assert list(report["dimensions"]) == [
        "fluency",
        "info",
        "outline",
        "organization",
        "focus",
        "coverage",
    ]
    judged = {r["id"]: r["judge_label"] for r in report["verdicts"]}
    # Outline stand-in: a point per distinct heading (the Porto article's planned four)
    assert [judged[f"a{k}-outline"] for k in range(1, 7)] == [4, 4, 0, 3, 3, 1]
    # Organization stand-in: 1 plus a point per section beyond the first
    assert [judged[f"a{k}-organization"] for k in range(1, 6)] == [4, 4, 1, 3, 3]
    org = report["dimensions"]["organization"]
    # human 5 3 1 3 2, stand-in 4 4 1 3 3: exact 2/5, all within one, bias (-1+1+0+0+1)/5
    assert (org["scale"], org["n"], org["exact"], org["within_one"]) == ([1, 5], 5, 0.4, 1.0)
    assert org["bias"] == pytest.approx(0.2)
    assert report["dimensions"]["info"]["n"] == 6 and report["dimensions"]["focus"]["n"] == 5
    # the stand-ins' quadratic kappas docs/llm.md quotes
    kappas = {d: round(s["quadratic_kappa"], 2) for d, s in report["dimensions"].items()}
    assert kappas == {
        "fluency": 0.31,
        "info": 0.71,
        "outline": 0.81,
        "organization": 0.8,
        "focus": -0.32,
        "coverage": 0.0,
    }


# ---- a scripted OpenAI-compatible judge ------------------------------------------------------

# The judge's reply per article (by title) and judge call, in the prompts' reply formats.
SCRIPT: dict[str, dict[str, str]] = {
    "2023 Porto floods": {
        "quality": "Fluency: Score 5, Informativeness: Score 4, Faithfulness: Score 5",
        "outline": "5",
        "organization": "Clear chronology. [RESULT] 4",
        "focus": "On topic. [RESULT] 4",
        "coverage": "Misses casualties. [RESULT] 3",
    },
    "Braga Music Festival": {
        "quality": "Fluency: 5, Informativeness: 4, Faithfulness: 4",
        "outline": "4",
        "organization": "Mostly clear. [RESULT] 4",
        "focus": "The festival is discussed well overall.",  # no [RESULT]: failed
        "coverage": "Covers the main points. [RESULT] 3",
    },
    "2024 Coimbra tuition protests": {
        "quality": "Fluency: 3",  # no Informativeness: Fluency and Info both fail
        "outline": "1",
        "organization": "Jumbled. [RESULT] 2",
        "focus": "On the protest. [RESULT] 4",
        "coverage": "Some aspects. [RESULT] 2",
    },
    "2022 Faro airport expansion": {
        "quality": "Fluency: 4, Informativeness: 2, Faithfulness: 5",
        "outline": "7",  # outside 0-5: failed
        "organization": "A structure is followed. [RESULT] 3",
        "focus": "Drifts to the city. [RESULT] 4",
        "coverage": "Thin. [RESULT] 2",
    },
    "Lisbon tram line 15": {
        "quality": "Fluency: 1, Informativeness: 1, Faithfulness: 3",
        "outline": "3",
        "organization": "Repetitive. [RESULT] 2",
        "focus": "About the tram. [RESULT] 4",
        "coverage": "Narrow. [RESULT] 1",
    },
    "Evora Museum reopening": {
        "quality": "Fluency: 4, Informativeness: 1, Faithfulness: 5",
        "outline": "2",
        "coverage": "One fact. [RESULT] 1",
    },
}
CRITERIA = {
    "[Coherence and Organization": "organization",
    "[Relevance and Focus": "focus",
    "[Broad Coverage": "coverage",
}


def scripted_reply(body: dict[str, Any], n: int) -> str:
    """SCRIPT's reply to the judge call the prompt is."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    if "Evaluate an encyclopedia text" in prompt:
        call = "quality"
    elif "evaluate the quality of the outline" in prompt:
        call = "outline"
    else:
        call = next(name for marker, name in CRITERIA.items() if marker in prompt)
    for title, replies in SCRIPT.items():
        if f"Keyword: {title}\n" in prompt or f"for the topic: {title}\n" in prompt:
            return replies[call]
    raise AssertionError(f"unscripted prompt: {prompt}")


def test_scripted_judge_agreement_per_dimension(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rubric.jsonl", rubric_lines())
    with openai_server(scripted_reply) as (url, seen):
        report = check_file(path, settings_for(url, tmp_path, reasks=0))
    assert seen.count == CALLS  # one call per article and judge, none per label
    assert (report["answered"], report["failed"], report["backend"]) == (29, 4, "openai")
    dims = report["dimensions"]

    def figures(dim: str) -> tuple[Any, ...]:
        d = dims[dim]
        return d["n"], d["failed"], d["exact"], d["within_one"], d["spearman"], d["bias"]

    # fluency, Coimbra failed: human 5 4 4 1, judge 5 5 4 1. Mid-ranks human 4 2.5 2.5 1,
    # judge 3.5 3.5 2 1: rho = 3.75 / sqrt(4.5 * 4.5) = 5/6. QWK: observed 1/4; expected
    # (17 + 22 + 41) / 16 = 5; 1 - 0.25 / 5 = 0.95.
    assert figures("fluency") == (4, 1, 0.75, 1.0, pytest.approx(5 / 6), 0.25)
    assert dims["fluency"]["quadratic_kappa"] == pytest.approx(0.95)
    # info, Coimbra failed: human 4 3 1 1 1, judge 4 4 2 1 1. Mid-ranks 5 4 2 2 2 and
    # 4.5 4.5 3 1.5 1.5: rho = 7.5 / sqrt(8 * 9). QWK: observed 2/5, expected 90/25: 8/9.
    assert figures("info") == (5, 1, 0.6, 1.0, pytest.approx(7.5 / 72**0.5), pytest.approx(0.4))
    assert dims["info"]["quadratic_kappa"] == pytest.approx(8 / 9)
    # outline, Faro failed (7): human 5 3 0 3 1, judge 5 4 1 3 2. Mid-ranks 5 3.5 1 3.5 2 and
    # 5 4 1 3 2: rho = 9.5 / sqrt(9.5 * 10). QWK: observed 3/5, expected 135/25: 8/9.
    assert figures("outline") == (5, 1, 0.4, 1.0, pytest.approx(0.95**0.5), pytest.approx(0.6))
    assert dims["outline"]["quadratic_kappa"] == pytest.approx(8 / 9)
    # organization: human 5 3 1 3 2, judge 4 4 2 3 2. Mid-ranks 5 3.5 1 3.5 2 and
    # 4.5 4.5 1.5 3 1.5: rho = 8.25 / sqrt(9.5 * 9). QWK: observed 3/5, expected 65/25: 10/13.
    assert figures("organization") == (
        5,
        0,
        0.4,
        1.0,
        pytest.approx(8.25 / 85.5**0.5),
        pytest.approx(0.2),
    )
    assert dims["organization"]["quadratic_kappa"] == pytest.approx(10 / 13)
    # focus, Braga failed: human 5 4 1 4, judge 4 4 4 4: exact 2/4, within one 3/4 (1 -> 4
    # is 3 off), bias (-1 + 0 + 3 + 0) / 4. A constant judge: rho undefined, said so; QWK:
    # observed 10/4, expected (1*4*1 + 1*4*9) / 16 = 10/4: 0.
    assert figures("focus") == (4, 1, 0.5, 0.75, None, 0.5)
    assert dims["focus"]["quadratic_kappa"] == pytest.approx(0.0)
    assert dims["focus"]["notes"] == ["Spearman's rho is undefined: the judge scores are all 4"]
    # coverage: human 4 3 2 1 2 1, judge 3 3 2 2 1 1. Mid-ranks 6 5 3.5 1.5 3.5 1.5 and
    # 5.5 5.5 3.5 3.5 1.5 1.5: rho = 12 / sqrt(16.5 * 16). QWK: observed 3/6, expected
    # 66/36: 8/11.
    assert figures("coverage") == (
        6,
        0,
        0.5,
        1.0,
        pytest.approx(12 / 264**0.5),
        pytest.approx(-1 / 6),
    )
    assert dims["coverage"]["quadratic_kappa"] == pytest.approx(8 / 11)
    assert dims["coverage"]["confusion"]["matrix"][1] == [1, 1, 0, 0, 0]  # human 2: judge 1, 2
    # the failed answers, excluded above, listed with their reasons
    failures = {(f["id"], f["where"], f["dimension"]): f["reason"] for f in report["failures"]}
    assert list(failures) == [
        ("a2-focus", "line 11", "focus"),
        ("a3-fluency", "line 13", "fluency"),
        ("a3-info", "line 14", "info"),
        ("a4-outline", "line 21", "outline"),
    ]
    assert "no '[RESULT] N' at the end of the answer" in failures[("a2-focus", "line 11", "focus")]
    assert "no 'Informativeness: N'" in failures[("a3-info", "line 14", "info")]
    assert "outline: 7 is outside 0-5" in failures[("a4-outline", "line 21", "outline")]
    assert report["failure_reasons"] == {"invalid_answer": 4}
    failed = next(r for r in report["verdicts"] if r["id"] == "a3-fluency")
    assert (failed["status"], failed["label"], failed["judge_label"]) == ("failed", 2, None)
    json.dumps(report, allow_nan=False)
    console = Console(record=True, width=120)
    print_report(report, console)
    shown = console.export_text()
    assert "failed judge answers (4)" in shown and "a4-outline (line 21, outline)" in shown
    assert "note: focus: Spearman's rho is undefined: the judge scores are all 4" in shown


# ---- the command -----------------------------------------------------------------------------


def test_cli_prints_dimensions_and_writes_the_report(project: Path) -> None:
    write_jsonl(project / "rubric.jsonl", rubric_lines())
    result = CliRunner().invoke(
        app, ["judge-check", "rubric.jsonl", "--judge", "wikigen-rubric", "--out", "out/r.json"]
    )
    assert result.exit_code == 0, result.output
    assert "per dimension" in result.output and "judge calls" in result.output
    assert "organization" in result.output and "wrote out/r.json" in result.output
    report = json.loads((project / "out" / "r.json").read_text("utf-8"))
    assert report["judge"] == "wikigen-rubric" and report["judge_calls"] == CALLS
    assert report["dimensions"]["organization"]["exact"] == 0.4


def test_cli_names_a_bad_rubric_line(project: Path) -> None:
    lines = rubric_lines()
    lines[4]["label"] = 9
    write_jsonl(project / "rubric.jsonl", lines)
    result = CliRunner().invoke(app, ["judge-check", "rubric.jsonl"])
    assert result.exit_code == 1
    assert (
        "rubric.jsonl:5: label: expected a whole number from 1 to 5 for focus (got 9)"
        in result.output
    )
