"""CFI: rule-based confusing facts and the check that rejects bad ones."""

from __future__ import annotations

import random

import pytest

from builders.lveval import cfi
from builders.lveval.records import Evidence, QAItem


def item(question: str, answers: tuple[str, ...], evidence: str) -> QAItem:
    return QAItem(
        "qa-1", "events_mixup", "en", "test", 1, question, answers, answers[0],
        (Evidence("p", 0, len(evidence), evidence),),
    )  # fmt: skip


DEATHS = item(
    "How many people were killed in Cyclone Imre?",
    ("23",),
    "Heavy rain fell for days. Imre killed 23 people, 15 of them in the Caro Islands.",
)
DATE = item(
    "When did the Tessel Pass rail accident take place?",
    ("10 February 2026",),
    "The train derailed in the Tessel Pass on 10 February 2026 at dawn.",
)
WINNER = item(
    "Who won the 2026 Korvenna Cup?",
    ("Meridal Athletic",),
    "Meridal Athletic won the final against Estmark Rovers.",
)
NAMES = ["Estmark Rovers", "Sorrel Bay", "Caro Islands", "Northgate United", "Valdra"]


@pytest.mark.parametrize("qa", [DEATHS, DATE, WINNER], ids=["number", "date", "name"])
def test_rule_based_facts_change_the_answer_and_pass_the_check(qa: QAItem) -> None:
    facts = {cfi.perturb(qa, random.Random(seed), NAMES) for seed in range(5)}
    assert None not in facts
    for fact in facts:
        assert fact and cfi.check(fact, qa) is None
        assert qa.answers[0] not in fact
        sentence, _ = cfi.answer_sentence(qa)
        assert len(set(fact.split()) & set(sentence.split())) >= len(sentence.split()) - 3


def test_a_date_keeps_its_shape_with_another_month() -> None:
    fact = cfi.perturb(DATE, random.Random(0), NAMES)
    assert fact and "10 " in fact and "2026" in fact and "February" not in fact


def test_a_name_is_swapped_for_one_of_as_many_words_that_shares_none() -> None:
    fact = cfi.perturb(WINNER, random.Random(0), NAMES)
    assert fact and fact.split(" won ")[0] in {"Northgate United", "Caro Islands", "Sorrel Bay"}


@pytest.mark.parametrize(
    ("fact", "reason"),
    [
        ("Imre killed 23 people, 16 of them in the Caro Islands.", "states the true answer '23'"),
        ("Imre did not kill 31 people in the Caro Islands.", "denies the question's premise"),
        ("Imre never killed 31 people, 15 of them in the Caro Islands.", "denies"),
        ("Heavy rain fell for days.", "does not resemble the evidence"),
        ("", "empty"),
        ("Imre killed 31 people, 15 of them in the Caro Islands.", None),
    ],
)
def test_the_check_rejects_true_answers_denials_and_unrelated_text(
    fact: str, reason: str | None
) -> None:
    verdict = cfi.check(fact, DEATHS)
    if reason is None:
        assert verdict is None
    else:
        assert verdict and reason in verdict


def test_the_check_compares_after_normalisation() -> None:
    qa = item("Where did it land?", ("the Caro Islands",), "It landed on the Caro Islands.")
    assert cfi.check("It landed on CARO ISLANDS.", qa) is not None
    assert cfi.check("It landed on the Sorrel Bay.", qa) is None
