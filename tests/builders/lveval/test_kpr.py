"""KPR: whole-word, case-carrying replacement in one pass; checks; reviewed rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.lveval import kpr
from builders.lveval.records import Evidence, QAItem, Rule


def item(question: str, answer: str, evidence: str, qa_id: str = "qa-1") -> QAItem:
    return QAItem(
        qa_id, "events_mixup", "en", "test", 1, question, (answer,), answer,
        (Evidence("p", 0, len(evidence), evidence),),
    )  # fmt: skip


def test_replacement_matches_whole_words_in_any_case_and_carries_the_case() -> None:
    replace = kpr.Replacer([Rule("Imre", "Dalven"), Rule("Caro Islands", "Velsa Isles")])
    text = "Imre hit Port Imre; IMRE and imre, not Imrean. The Caro Islands, caro islands."
    assert replace(text) == (
        "Dalven hit Port Dalven; DALVEN and dalven, not Imrean. The Velsa Isles, velsa isles."
    )
    assert replace.survivors(replace(text)) == []


def test_rules_apply_in_one_pass_so_no_replacement_is_replaced_again() -> None:
    replace = kpr.Replacer([Rule("Alpha", "Beta"), Rule("Beta", "Gamma")])
    assert replace("Alpha met Beta.") == "Beta met Gamma."


def test_proposals_name_proper_nouns_only_and_invent_unused_names() -> None:
    qa = item(
        "How many people did Cyclone Imre kill in Valdra?",
        "23",
        "Flooding followed. Cyclone Imre killed 23 people in Valdra.",
    )
    words, lower = kpr.vocabulary([*(e.text for e in qa.evidence), "the flooding followed"])
    found = kpr.item_names(qa, lower)
    assert found == ["Cyclone", "Imre", "Valdra"]
    assert "Flooding" not in found  # also written in lower case
    rules = kpr.propose(qa, found, 7, max_rules=4)
    assert [r.orig for r in rules] == found
    assert all(r.repl and r.repl.lower() not in words for r in rules)
    assert rules == kpr.propose(qa, found, 7, max_rules=4)  # seeded
    assert kpr.problems(qa, rules, words) is None
    assert len(kpr.propose(qa, found, 7, max_rules=2)) == 2


def test_a_replacement_already_in_the_text_is_a_collision() -> None:
    qa = item("Where did Imre land?", "Caro", "Imre made landfall near Caro and Dalven.")
    words, _ = kpr.vocabulary([qa.evidence[0].text])
    problem = kpr.problems(qa, [Rule("Imre", "Dalven")], words)
    assert problem and "collides" in problem and "'Dalven'" in problem


def test_an_answer_lost_from_the_replaced_evidence_is_reported() -> None:
    rules = [Rule("Port Imre", "Dalven"), Rule("Imre", "Tis")]
    qa = item("Where did the storm land?", "Port Imre", "The storm landed at Port Imre.")
    assert kpr.problems(qa, rules, set()) is None
    qa = item("Which storm landed?", "Imre", "It landed at Port Imre.")
    problem = kpr.problems(qa, rules, set())
    assert problem == "answer 'Tis' is not in the replaced evidence"


def test_reviewed_rules_override_veto_and_add_by_narrowest_scope() -> None:
    lines = [
        {"orig": "Imre", "repl": "Ostwyn", "scope": "*"},
        {"orig": "imre", "repl": "Kalder", "scope": "qa-1"},
        {"orig": "Valdra", "repl": None, "scope": "events_mixup"},
        {"orig": "Korvenna", "repl": "Sunmek"},
    ]
    reviewed = kpr.parse_rules([*(json.dumps(x) for x in lines), "", " "], "rules.jsonl")
    assert [r.origin for r in reviewed] == ["reviewed"] * 4
    proposed = [Rule("Imre", "Dalven", "qa-1"), Rule("Valdra", "Brasun", "qa-1")]
    chosen = kpr.resolve(proposed, reviewed, item("q?", "a", "a", qa_id="qa-1"))
    assert {(r.orig.lower(), r.repl) for r in chosen} == {
        ("imre", "Kalder"),
        ("korvenna", "Sunmek"),
    }
    other = kpr.resolve(proposed, reviewed, item("q?", "a", "a", qa_id="qa-2"))
    assert {(r.orig.lower(), r.repl) for r in other} == {("imre", "Ostwyn"), ("korvenna", "Sunmek")}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"orig": "A", "repl": "B"', ":2: not valid JSON"),
        ('{"orig": "A", "repl": "B", "note": 1}', ":2: unknown key 'note'"),
        ('{"orig": "", "repl": "B"}', ":2: 'orig' must be a non-empty string"),
        ('{"orig": "A", "repl": 3}', ":2: 'repl' must be a non-empty string or null"),
        ('["A", "B"]', ":2: expected an object"),
    ],
)
def test_bad_rules_name_the_source_line_and_key(line: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"review/rules.jsonl{message}"):
        kpr.parse_rules(['{"orig": "Imre", "repl": "Dalven"}', line], "review/rules.jsonl")


def test_the_kpr_builder_reads_no_files() -> None:
    assert not hasattr(kpr, "load_rules")
    source = Path(kpr.__file__).read_text(encoding="utf-8")
    assert "read_text" not in source and "open(" not in source and "pathlib" not in source
