"""``benchsmith judge-check``: reading labelled verdicts, agreement metrics, the report."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.evaluation.judge_check import LabelFileError, check_file, read_labels
from pipelines.evaluation.judge_check.agreement import cohen_kappa
from pipelines.evaluation.judge_check.verdicts import summary_bullets
from tests.pipelines.evaluation.conftest import template, write_jsonl
from tests.pipelines.llm.conftest import settings_for
from tests.support.openai_server import openai_server

# Two annotated summaries in SummHay's layout (data/eval_benchmark_data.json). The lexical
# template judge answers each insight as the comment says: full when one bullet holds all the
# insight's numbers and names, partial when some, none otherwise.
SAMPLES: list[dict[str, Any]] = [
    {
        "topic": "Portuguese cities",
        "subtopic_id": "st1",
        "subtopic": "housing and transport",
        "summkey": "summary_subtopic_bm25_model-a",
        "summary": [
            "## Housing and transport",  # a heading: bullet 1, as SummHay numbers lines
            "- Rents in Lisbon rose 12 percent in 2024. [3][7]",
            "- Porto opened 3 tram lines in March. [2]",
        ],
        "reference_insights": [
            {
                "insight_id": "i1",
                "insight_name": "rents",
                "insight": "Lisbon rents rose 12 percent in 2024.",
            },
            {
                "insight_id": "i2",
                "insight_name": "trams",
                "insight": "Porto opened 3 tram lines and 2 bus routes.",
            },
            {
                "insight_id": "i3",
                "insight_name": "concerts",
                "insight": "Braga hosted 40 concerts in 2023.",
            },
            {
                "insight_id": "i7",
                "insight_name": "palaces",
                "insight": "Sintra palaces drew 5 thousand visitors.",
            },
        ],
        "annotation": [
            # judge: full, bullet 2 (candidate 1 is the second line, bullet 2)
            {"insight_id": "i1", "coverage": "fully_covered", "candidate_id": "1"},
            # judge: partial, bullet 3
            {"insight_id": "i2", "coverage": "partially_covered", "candidate_id": "2"},
            # judge: none
            {"insight_id": "i3", "coverage": "not_covered", "candidate_id": "no_selection"},
            # judge: none; the human linked the heading (bullet 1)
            {"insight_id": "i7", "coverage": "partially_covered", "candidate_id": "0"},
        ],
        "predictions_prompted_gpt-4o": [
            {"insight_id": "i1", "coverage": "FULL_COVERAGE", "bullet_id": 2}
        ],
    },
    {
        "topic": "Portuguese cities",
        "subtopic_id": "st2",
        "subtopic": "travel and education",
        "summkey": "summary_subtopic_oracle_model-b",
        "summary": [
            "- Faro airport handled 9 million passengers. [1]",
            "- Coimbra students protested fees. [4]",
        ],
        "reference_insights": [
            {"insight_id": "i4", "insight": "Faro airport handled 9 million passengers."},
            {"insight_id": "i5", "insight": "Coimbra students protested fees in October."},
            {"insight_id": "i6", "insight": "Evora reopened 2 museums."},
        ],
        "annotation": [
            # judge: full, bullet 1
            {"insight_id": "i4", "coverage": "partially_covered", "candidate_id": "0"},
            # judge: partial, bullet 2
            {"insight_id": "i5", "coverage": "fully_covered", "candidate_id": "0"},
            # judge: none
            {"insight_id": "i6", "coverage": "not_covered", "candidate_id": "no_selection"},
        ],
    },
]


def write_summhay(path: Path) -> Path:
    """SAMPLES as SummHay's annotation file: an indented JSON array."""
    path.write_text(json.dumps(SAMPLES, indent=2), "utf-8")
    return path


LABEL = {"fully_covered": "full", "partially_covered": "partial", "not_covered": "none"}


def as_jsonl(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same verdicts in benchsmith's JSONL: bullet_id is the 1-based line (candidate + 1)."""
    lines = []
    for sample in samples:
        insights = {i["insight_id"]: i["insight"] for i in sample["reference_insights"]}
        for label in sample["annotation"]:
            line = {
                "id": label["insight_id"],
                "judge": "summhay-coverage",
                "inputs": {"summary": sample["summary"], "insight": insights[label["insight_id"]]},
                "label": LABEL[label["coverage"]],
            }
            if label["candidate_id"] != "no_selection":
                line["bullet_id"] = int(label["candidate_id"]) + 1
            lines.append(line)
    return lines


# ---- Cohen's kappa ---------------------------------------------------------------------------


def test_kappa_matches_the_textbook_example() -> None:
    # Wikipedia's example: 50 proposals, both yes 20, A yes B no 5, A no B yes 10, both no 15.
    # p_o = 35/50 = 0.7; A says yes 25 times, B 30: p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5;
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    a = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa(["x", "x"], ["x", "x"]) is None  # p_e = 1: undefined
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError):
        cohen_kappa(["x"], [])


def test_kappa_matches_sklearn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(7)
    for n in (5, 40, 300):
        human = [rng.choice(["full", "partial", "none"]) for _ in range(n)]
        judge = [h if rng.random() < 0.6 else rng.choice(["full", "partial"]) for h in human]
        assert cohen_kappa(human, judge) == pytest.approx(metrics.cohen_kappa_score(human, judge))


# ---- reading ---------------------------------------------------------------------------------


def test_summhay_lines_map_to_the_bullets_the_metric_shows() -> None:
    bullets, of_line = summary_bullets(SAMPLES[0]["summary"])
    # SummHay's judge numbers line i as bullet i + 1, the heading included
    assert [b.bullet_id for b in bullets] == [1, 2, 3]
    assert bullets[0].text == "## Housing and transport" and bullets[0].citations == ()
    assert bullets[1].text.startswith("Rents in Lisbon") and bullets[1].citations == (3, 7)
    assert of_line == {1: 1, 2: 2, 3: 3}


def test_both_formats_read_to_the_same_asks(tmp_path: Path) -> None:
    summhay = read_labels(write_summhay(tmp_path / "eval_benchmark_data.json"))
    jsonl = read_labels(write_jsonl(tmp_path / "labels.jsonl", as_jsonl(SAMPLES)))
    assert (summhay.format, jsonl.format) == ("summhay", "jsonl")
    assert summhay.judge == jsonl.judge == "summhay-coverage"
    assert [i.label for i in summhay.items] == [i.label for i in jsonl.items]
    assert [(i.linked, i.bullet) for i in summhay.items] == [
        (i.linked, i.bullet) for i in jsonl.items
    ]
    assert [i.ask for i in summhay.items] == [i.ask for i in jsonl.items]
    first = summhay.items[0]
    assert first.item_id == "summary_subtopic_bm25_model-a:i1"
    assert (
        first.ask.prompt == "summhay/judge" and first.ask.variables["bullets"][0]["bullet_id"] == 1
    )


GOOD = {
    "judge": "summhay-coverage",
    "inputs": {"summary": ["- a [1]", "- b [2]", "- c [3]"], "insight": "a"},
    "label": "full",
}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps([GOOD]), "expected a JSON object"),
        (json.dumps(GOOD | {"bulet_id": 2}), "bulet_id: unknown key"),
        (json.dumps(GOOD | {"judge": "rouge"}), "judge: Input should be"),
        (json.dumps(GOOD | {"label": "maybe"}), "label: expected full, partial or none"),
        (json.dumps(GOOD | {"bullet_id": 9}), "bullet_id 9: the summary has 3 lines"),
        (json.dumps(GOOD | {"inputs": {"summary": ["- a"]}}), "inputs.insight: required key"),
        (
            json.dumps({"judge": "summhay-coverage", "inputs": GOOD["inputs"], "label": True}),
            "label: expected full, partial or none",
        ),
    ],
)
def test_a_bad_line_is_named_with_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(f"{json.dumps(GOOD)}\n\n{line}\n", "utf-8")
    with pytest.raises(LabelFileError) as caught:
        read_labels(path)
    assert str(caught.value).startswith(f"{path}:3: ") and problem in str(caught.value)


def test_a_bad_entails_label_is_named(tmp_path: Path) -> None:
    line = {"judge": "wikigen-entails", "inputs": {"premise": "p", "claim": "c"}, "label": "yes"}
    path = write_jsonl(tmp_path / "labels.jsonl", [line])
    with pytest.raises(LabelFileError, match=r"labels\.jsonl:1: label: expected true or false"):
        read_labels(path)


def test_a_bad_summhay_element_is_named(tmp_path: Path) -> None:
    samples = json.loads(json.dumps(SAMPLES))
    samples[1]["annotation"][2]["candidate_id"] = "12"
    path = tmp_path / "eval_benchmark_data.json"
    path.write_text(json.dumps(samples, indent=2))
    with pytest.raises(LabelFileError) as caught:
        read_labels(path)
    assert str(caught.value) == (
        f"{path}: element [1] annotation[2]: candidate_id '12' is no line of the summary "
        "(0 to 1, or 'no_selection')"
    )
    samples[1]["annotation"][2] = {"insight_id": "i9", "coverage": "not_covered"}
    path.write_text(json.dumps(samples, indent=2))
    with pytest.raises(LabelFileError, match=r"element \[1\] annotation\[2\]: insight 'i9'"):
        read_labels(path)
    path.write_text(json.dumps(samples, indent=2).replace('"i9"', "i9", 1))
    with pytest.raises(LabelFileError, match=rf"{path}:\d+: not valid JSON"):
        read_labels(path)
    with pytest.raises(LabelFileError, match="coverage verdicts only"):
        read_labels(write_summhay(path), "wikigen-entails")


# ---- the template judge ----------------------------------------------------------------------


def test_template_judge_agreement_on_both_formats(tmp_path: Path) -> None:
    reports = [
        check_file(write_summhay(tmp_path / "eval_benchmark_data.json"), template(tmp_path)),
        check_file(write_jsonl(tmp_path / "l.jsonl", as_jsonl(SAMPLES)), template(tmp_path)),
    ]
    for report in reports:
        # human, judge: i1 full full; i2 partial partial; i3 none none; i7 partial none;
        # i4 partial full; i5 full partial; i6 none none -> 4 of 7 agree
        assert (report["items"], report["answered"], report["failed"]) == (7, 7, 0)
        assert report["accuracy"] == pytest.approx(4 / 7)
        # human full 2, partial 3, none 2; judge full 2, partial 2, none 3
        # p_e = (2*2 + 3*2 + 2*3) / 49 = 16/49; kappa = (28/49 - 16/49) / (33/49) = 12/33
        assert report["kappa"] == pytest.approx(12 / 33)
        assert report["confusion"]["matrix"] == [[1, 1, 0], [1, 1, 1], [0, 0, 2]]
        assert report["labels"]["none"] == {
            "human": 2,
            "judge": 3,
            "agree": 2,
            "precision": pytest.approx(2 / 3),
            "recall": 1.0,
            "f1": pytest.approx(0.8),
        }
        # linked by both: i1 (2, 2), i2 (3, 3), i4 (1, 1), i5 (1, 2); the judge links no
        # bullet for i7, whose human link is the heading (bullet 1)
        assert report["linking"] == {
            "compared": 4,
            "agree": 3,
            "accuracy": 0.75,
            "human_linked": 5,
        }
        # scores: human 1 .5 0 .5 .5 1 0 (sum 3.5), judge 1 .5 0 0 1 .5 0 (sum 3.0)
        assert report["coverage_bias"] == pytest.approx(-0.5 / 7)
        assert report["backend"] == "template" and report["failures"] == []
    assert reports[0]["verdicts"][0]["id"] == "summary_subtopic_bm25_model-a:i1"
    assert reports[1]["verdicts"][0]["id"] == "i1"


def test_template_entailment_judge(tmp_path: Path) -> None:
    premise = "The bridge over the Tagus in Lisbon opened in 1966 after four years of work."
    claims = [  # (claim, human label); the template judge's answer in the comment
        ("The bridge in Lisbon opened in 1966.", True),  # entails
        ("The bridge in Lisbon opened in 1972.", False),  # not: 1972 is not in the document
        ("The bridge in Porto opened in 1966.", True),  # not: Porto is not in the document
        ("Lisbon's bridge took four years of work.", True),  # entails
    ]
    lines = [
        {"judge": "wikigen-entails", "inputs": {"premise": premise, "claim": c}, "label": label}
        for c, label in claims
    ]
    report = check_file(write_jsonl(tmp_path / "entails.jsonl", lines), template(tmp_path))
    assert report["judge"] == "wikigen-entails" and report["accuracy"] == 0.75
    # human entails 3, not 1; judge entails 2, not 2: p_e = (3*2 + 1*2) / 16 = 0.5
    # kappa = (0.75 - 0.5) / (1 - 0.5) = 0.5
    assert report["kappa"] == pytest.approx(0.5)
    assert report["confusion"]["matrix"] == [[2, 1], [0, 1]]
    assert "linking" not in report


# ---- a scripted OpenAI-compatible judge ------------------------------------------------------

SUMMARY = [
    "- Rents in Lisbon rose 12 percent in 2024. [3]",
    "- Porto opened 3 tram lines in March. [2]",
    "- Faro airport handled 9 million passengers. [1]",
]
SCRIPT: list[tuple[str, str, int | None, str]] = [
    # (insight, human label, human bullet, the scripted judge's answer)
    ("q1", "full", 1, '{"coverage": "full", "bullet_id": 1}'),  # right, same bullet
    ("q2", "partial", 2, '{"coverage": "partial", "bullet_id": 2}'),  # right, same bullet
    ("q3", "none", None, '{"coverage": "none", "bullet_id": "NA"}'),  # right
    ("q4", "none", None, '{"coverage": "full", "bullet_id": 1}'),  # wrong
    ("q5", "full", 2, '{"coverage": "partial", "bullet_id": 2}'),  # wrong, same bullet
    ("q6", "partial", 1, "I think it is covered."),  # fails: not the asked JSON
    ("q7", "full", 1, '{"coverage": "FULL_COVERAGE", "bullet_id": "bullet 2"}'),  # right, other
]
ENTAILS = [("c1", True), ("c2", False)]


def scripted_lines() -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {
            "id": insight,
            "judge": "summhay-coverage",
            "inputs": {"summary": SUMMARY, "insight": f"insight {insight}"},
            "label": label,
            "bullet_id": bullet,
        }
        for insight, label, bullet, _ in SCRIPT
    ]
    lines += [
        {
            "id": claim,
            "judge": "wikigen-entails",
            "inputs": {"premise": "a document", "claim": f"claim {claim}"},
            "label": label,
        }
        for claim, label in ENTAILS
    ]
    return lines


def scripted_reply(body: dict[str, Any], n: int) -> str:
    prompt = body["messages"][-1]["content"]
    if "Does the document entail" in prompt:
        return '{"entails": true}'
    for insight, _, _, answer in SCRIPT:
        if f"Reference insight: insight {insight}\n" in prompt:
            return answer
    raise AssertionError(f"unscripted prompt: {prompt}")


def test_scripted_judge_agreement_and_failures(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "labels.jsonl", scripted_lines())
    with pytest.raises(LabelFileError, match="several judges"):
        read_labels(path)
    with openai_server(scripted_reply) as (url, seen):
        llm = settings_for(url, tmp_path, reasks=0)
        report = check_file(path, llm, "summhay-coverage")
        assert seen.count == len(SCRIPT)  # reasks 0: one call each
        entails = check_file(path, llm, "wikigen-entails")
    assert (report["items"], report["skipped"], report["answered"], report["failed"]) == (
        7,
        2,
        6,
        1,
    )
    # answered: q1 q2 q3 q7 agree, q4 q5 do not -> 4/6
    assert report["accuracy"] == pytest.approx(4 / 6)
    # human full 3 (q1 q5 q7), partial 1 (q2), none 2 (q3 q4);
    # judge full 3 (q1 q4 q7), partial 2 (q2 q5), none 1 (q3)
    # p_e = (3*3 + 1*2 + 2*1) / 36 = 13/36; kappa = (24/36 - 13/36) / (23/36) = 11/23
    assert report["kappa"] == pytest.approx(11 / 23)
    assert report["confusion"]["matrix"] == [[2, 1, 0], [0, 1, 0], [1, 0, 1]]
    full, partial, none = (report["labels"][k] for k in ("full", "partial", "none"))
    assert (full["precision"], full["recall"]) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert (partial["precision"], partial["recall"]) == (0.5, 1.0)
    assert (none["precision"], none["recall"]) == (1.0, 0.5)
    # both name a bullet: q1 (1, 1), q2 (2, 2), q5 (2, 2), q7 (1, 2)
    assert report["linking"]["compared"] == 4 and report["linking"]["agree"] == 3
    [failure] = report["failures"]
    assert failure["id"] == "q6" and failure["where"] == "line 6"
    assert failure["reason"].startswith("invalid_answer: ")
    assert report["failure_reasons"] == {"invalid_answer": 1}
    assert report["llm"]["failed"] == 1 and report["backend"] == "openai"
    # the entailment judge says true twice: human true 1, false 1
    # p_o = 1/2; p_e = (1*2 + 1*0) / 4 = 1/2; kappa = 0
    assert (entails["items"], entails["skipped"], entails["accuracy"]) == (2, 7, 0.5)
    assert entails["kappa"] == pytest.approx(0.0)
    assert entails["labels"]["not_entails"]["precision"] is None  # the judge never said so


# ---- the command -----------------------------------------------------------------------------

runner = CliRunner()


def test_cli_prints_tables_and_writes_the_report(project: Path) -> None:
    write_summhay(project / "eval_benchmark_data.json")
    result = runner.invoke(
        app, ["judge-check", "eval_benchmark_data.json", "--out", "reports/judge.json"]
    )
    assert result.exit_code == 0, result.output
    assert "Cohen's kappa" in result.output and "confusion" in result.output
    assert "linking accuracy" in result.output and "wrote reports/judge.json" in result.output
    report = json.loads((project / "reports" / "judge.json").read_text("utf-8"))
    assert report["kappa"] == pytest.approx(12 / 33) and report["format"] == "summhay"
    assert [p.name for p in (project / "reports").iterdir()] == ["judge.json"]


def test_cli_names_a_bad_line(project: Path) -> None:
    lines = as_jsonl(SAMPLES)
    lines[2]["label"] = "mostly"
    write_jsonl(project / "labels.jsonl", lines)
    result = runner.invoke(app, ["judge-check", "labels.jsonl", "--judge", "summhay-coverage"])
    assert result.exit_code == 1
    assert "labels.jsonl:3: label: expected full, partial or none (got 'mostly')" in result.output
    missing = runner.invoke(app, ["judge-check", "nothing.jsonl"])
    assert missing.exit_code == 1 and "missing nothing.jsonl" in missing.output
