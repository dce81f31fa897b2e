"""The reviews file: its lines, what publish does with them, and the Audit's kappas."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pytest

from pipelines.errors import ReviewError
from pipelines.publish.audit import audit_section, cohen_kappa, fleiss_kappa, rejected_table
from pipelines.publish.registry import DATASETS
from pipelines.publish.reviews import (
    DatasetReview,
    Review,
    Verdict,
    append_review,
    latest,
    read_reviews,
)

RELEASE = "2026.11.0"
QA = next(c for c in DATASETS["lveval"].configs if c.name == "qa")
LEVELS = next(c for c in DATASETS["lveval"].configs if c.name != "qa")


def review(item: str, reviewer: str, decision: str = "accept", **fields: Verdict) -> Review:
    reason = "answer not in evidence" if decision == "reject" else ""
    return Review(RELEASE, "lveval", "qa", item, reviewer, decision, reason, dict(fields),
                  "2026-11-28T10:00:00Z")  # fmt: skip


def write(path: Path, *reviews: Review) -> Path:
    for r in reviews:
        append_review(path, r)
    return path


def test_fleiss_kappa_matches_the_worked_example():
    # Wikipedia, "Fleiss' kappa", worked example: 10 items, 14 raters, 5 categories
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=1e-4)
    assert math.isnan(fleiss_kappa([[3, 0], [3, 0]]))  # every rating alike: undefined
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[2, 0], [1, 2]])


def test_cohen_kappa_matches_the_worked_example():
    # Wikipedia, "Cohen's kappa": 50 proposals, yes/yes 20, yes/no 5, no/yes 10, no/no 15
    first = ["yes"] * 25 + ["no"] * 25
    second = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(first, second) == pytest.approx(0.4)
    assert math.isnan(cohen_kappa(["accept"] * 3, ["accept"] * 3))


def test_lines_are_appended_whole_and_the_latest_per_reviewer_wins(tmp_path):
    path = write(tmp_path / "reviews" / f"{RELEASE}.jsonl", review("qa-1", "ana"),
                 review("qa-1", "ben", "reject"), review("qa-1", "ana", "reject"))  # fmt: skip
    text = path.read_text()
    assert text.endswith("\n") and len(text.splitlines()) == 3
    assert json.loads(text.splitlines()[1])["reason"] == "answer not in evidence"
    read = read_reviews(path, RELEASE)
    assert [r.line for r in read] == [1, 2, 3]
    assert [(r.reviewer, r.decision) for r in latest(read)] == [
        ("ben", "reject"),
        ("ana", "reject"),
    ]
    path.write_text(text + '{"release": "2026.11.0", "dat')  # a line cut short
    with pytest.raises(ReviewError, match=r"unfinished"):
        append_review(path, review("qa-2", "ana"))
    with pytest.raises(ReviewError, match=rf"{path}:4: not a whole JSON line"):
        read_reviews(path, RELEASE)


def test_a_line_of_another_release_or_a_bad_line_names_the_file_and_line(tmp_path):
    other = Review("2026.12.0", *list(review("qa-1", "ana").__dict__.values())[1:-1])
    path = write(tmp_path / "r.jsonl", review("qa-1", "ana"), other)
    with pytest.raises(ReviewError, match=rf"{path}:2: names release '2026.12.0'"):
        read_reviews(path, RELEASE)
    bad = {
        '"reviewer": ""': "'reviewer' must be a non-empty string",
        '"config": "events_mixup_2k_clean"': "config 'events_mixup_2k_clean' is not reviewed",
        '"fields": {"colour": {"verdict": "wrong"}}': "unknown field 'colour'",
        '"fields": {"evidence": {"verdict": "wrong", "correction": "x"}}': "cannot take",
        '"decision": "reject"': "say why for a reject",
    }
    for change, message in bad.items():
        line = json.loads(review("qa-1", "ana").to_line()) | json.loads("{" + change + "}")
        path.write_text(json.dumps(line) + "\n")
        with pytest.raises(ReviewError, match=rf"{path}:1: .*{message}"):
            read_reviews(path, RELEASE)


def _records() -> pa.Table:
    rules = [[{"orig": "Imre", "repl": "Thofaber"}], [], []]
    return pa.table({
        "qa_id": ["qa-1", "qa-2", "qa-3"],
        "input": ["When did Cyclone Imre end?", "Who?", "Where?"],
        "answers": [["17 January"], ["Ana"], ["Port Imre"]],
        "replacement_rules": rules,
    })  # fmt: skip


def test_rejected_items_leave_every_config_with_their_ids_and_corrections_apply(tmp_path):
    fixed = Verdict("wrong", "When did Cyclone Imre reach Port Imre?")
    path = write(
        tmp_path / "r.jsonl",
        review("qa-1", "ana", question=fixed, answers=Verdict("wrong", ["17 Jan", "17 January"])),
        review("qa-2", "ben", "reject"),
        review("qa-2", "ana"),  # one reject is enough
    )
    dataset = DatasetReview.of(read_reviews(path, RELEASE), "lveval", path)
    assert dataset is not None
    assert DatasetReview.of(read_reviews(path, RELEASE), "summhay", path) is None
    level = dataset.for_config("events_mixup_2k_kpr", LEVELS)
    assert level is not None
    rows = level.apply(_records(), LEVELS).to_pylist()
    assert [r["qa_id"] for r in rows] == ["qa-1", "qa-3"]
    # the question is published from `input`; this row's KPR rule applies to the correction
    assert rows[0]["input"] == "When did Cyclone Thofaber reach Port Thofaber?"
    assert rows[0]["answers"] == ["17 Jan", "17 January"]
    assert rows[1]["input"] == "Where?"
    qa = dataset.for_config("qa", QA)
    assert qa is not None
    qa.apply(_records().rename_columns(["qa_id", "question", "answers", "r"]), QA)
    dataset.check_items()  # every item named was seen
    table = rejected_table(dataset)
    assert table.rows == [["qa", "qa-2", "ben", "answer not in evidence"]]
    audit = audit_section(dataset)
    assert "2 items of this release" in audit and "| decision | 3 | 2 | 66.7% |" in audit
    assert "| qa-1 | question | When did Cyclone Imre reach Port Imre? | ana |" in audit
    assert "| decision | 1 | 2 | n/a |" not in audit  # one item, two reviewers, disagreeing
    assert "| decision | 1 | 2 | 0.000 | Cohen's kappa |" in audit


def test_an_unknown_item_names_the_file_and_line(tmp_path):
    path = write(tmp_path / "r.jsonl", review("qa-1", "ana"), review("qa-404", "ana"))
    dataset = DatasetReview.of(read_reviews(path, RELEASE), "lveval", path)
    assert dataset is not None
    qa = dataset.for_config("qa", QA)
    assert qa is not None
    qa.apply(pa.table({"qa_id": ["qa-1"], "question": ["?"], "answers": [["a"]]}), QA)
    with pytest.raises(ReviewError, match=rf"{path}:2: unknown item 'qa-404' of lveval/qa"):
        dataset.check_items()


def test_three_reviewers_agree_by_fleiss_kappa(tmp_path):
    lines = [review(f"qa-{i}", who, "reject" if (i, who) == (2, "cy") else "accept")
             for i in range(1, 4) for who in ("ana", "ben", "cy")]  # fmt: skip
    path = write(tmp_path / "r.jsonl", *lines)
    dataset = DatasetReview.of(read_reviews(path, RELEASE), "lveval", path)
    assert dataset is not None
    # 3 items x 3 raters: [3,0], [2,1], [3,0] -> P = (1 + 1/3 + 1) / 3, p = (8/9, 1/9)
    expected = (7 / 9 - (64 + 1) / 81) / (1 - 65 / 81)
    assert f"| decision | 3 | 3 | {expected:.3f} | Fleiss' kappa |" in audit_section(dataset)
