"""Mixup contexts: lengths within tolerance at every level, shared QA, exact positions, seeds."""

from __future__ import annotations

import dataclasses
import random
import re

import pytest

from builders.lveval.build import Prepared, records
from builders.lveval.contexts import HEADER_WORDS, AssemblyError, Corpus, assemble, level_words
from builders.lveval.records import VARIANTS, Evidence, Passage, QAItem, Rule
from builders.lveval.shuffle import SHORT
from builders.lveval.text import normal_form

WORDS = [
    "river",
    "bridge",
    "council",
    "harbour",
    "market",
    "station",
    "valley",
    "tower",
    "school",
    "road",
    "farm",
    "mill",
]
TOLERANCE = 0.05


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 14))]
    return " ".join(words).capitalize() + "."


def make_corpus(n: int = 40, seed: int = 1) -> list[Passage]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        sentences = [_sentence(rng) for _ in range(rng.randint(15, 40))]
        out.append(Passage(f"p{k:03d}", "synthetic", f"Passage {k}", " ".join(sentences)))
    return out


def make_item(k: int) -> tuple[QAItem, Passage]:
    evidence = f"The Norvale{k} relief fund paid out {4100 + k} grants in the spring."
    text = f"{_sentence(random.Random(k))} {evidence} {_sentence(random.Random(k + 99))}"
    passage = Passage(f"support{k}", "synthetic", "", text)
    start = text.index(evidence)
    item = QAItem(
        f"qa-{k}", "synthetic_mixup", "en", "synthetic", 1,
        f"How many grants did the Norvale{k} relief fund pay out?",
        (f"{4100 + k}",), f"{4100 + k}",
        (Evidence(passage.passage_id, start, start + len(evidence), evidence),),
    )  # fmt: skip
    return item, passage


@pytest.fixture(scope="module")
def world() -> tuple[Corpus, list[Prepared]]:
    passages = make_corpus()
    prepared = []
    for k in range(3):
        item, support = make_item(k)
        passages.append(support)
        fact = f"The Norvale{k} relief fund paid out {9000 + k} grants in the spring."
        rule = Rule(f"Norvale{k}", f"Quolin{k}", item.qa_id)
        prepared.append(Prepared(item, (fact,), (rule,)))
    return Corpus(passages), prepared


LEVELS = {"1k": 1000, "2k": 2000, "3k": 3000}


def build(world, seed: int = 7) -> list[dict]:
    corpus, prepared = world
    return [
        row
        for p in prepared
        for label, words in LEVELS.items()
        for row in records(p, corpus, label, words, seed=seed, tolerance=TOLERANCE)
    ]


def test_level_labels() -> None:
    assert level_words("16k") == 16000 and level_words("2500") == 2500
    with pytest.raises(ValueError, match="'16 thousand'"):
        level_words("16 thousand")


def test_every_record_lands_within_the_tolerance_of_its_level(world) -> None:
    rows = build(world)
    assert len(rows) == 3 * len(LEVELS) * len(VARIANTS)
    for row in rows:
        words = row["level_words"]
        counted = (
            len(row["input"].split())
            + len(row["context"].split())
            + sum(len(a.split()) for a in row["answers"])
        )
        assert counted == row["length"]
        assert words * (1 - TOLERANCE) <= row["length"] <= words, (row["level"], row["variant"])


def test_the_same_qa_pairs_appear_at_every_level_and_only_the_context_differs(world) -> None:
    rows = build(world)
    by_item: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        by_item.setdefault((row["qa_id"], row["variant"]), []).append(row)
    for group in by_item.values():
        assert {r["level"] for r in group} == set(LEVELS)
        assert len({(r["input"], tuple(r["answers"]), r["answer_keywords"]) for r in group}) == 1
        assert len({r["context"] for r in group}) == len(LEVELS)


def test_positions_match_the_context_text_exactly_in_every_variant(world) -> None:
    for row in build(world):
        context = row["context"]
        assert row["evidence_positions"]
        for pos in row["evidence_positions"] + row["confusing_fact_positions"]:
            assert context[pos["start"] : pos["end"]] == pos["text"]
            assert pos["depth"] == pytest.approx(pos["start"] / len(context), abs=1e-4)
            header = f"### Passage {pos['passage']}\n"
            assert context.rfind("### Passage ", 0, pos["start"]) == context.rfind(
                header, 0, pos["start"]
            )
        for pos in row["evidence_positions"]:
            assert any(a in pos["text"] for a in row["answers"])
        has_facts = "cfi" in row["variant"]
        assert bool(row["confusing_facts"]) == has_facts
        assert len(row["confusing_fact_positions"]) == (1 if has_facts else 0)
        if has_facts:
            assert row["confusing_fact_positions"][0]["text"] == row["confusing_facts"][0]
        headers = [int(n) for n in re.findall(r"^### Passage (\d+)$", context, re.M)]
        assert headers == list(range(1, len(row["passage_ids"]) + 1))


def test_keyword_replacement_is_complete_and_consistent(world) -> None:
    for row in build(world):
        k = row["qa_id"].split("-")[1]
        text = " ".join([row["input"], row["context"], *row["answers"], *row["confusing_facts"]])
        if "kpr" in row["variant"]:
            assert f"Norvale{k}" not in text and f"Quolin{k}" in row["input"]
            assert row["replacement_rules"] == [
                {"orig": f"Norvale{k}", "repl": f"Quolin{k}", "scope": row["qa_id"]}
            ]
            assert f"Quolin{k} relief fund" in row["evidence_positions"][0]["text"]
        else:
            assert f"Quolin{k}" not in text and not row["replacement_rules"]


def test_a_seed_fixes_the_context_and_another_seed_moves_the_evidence(world) -> None:
    first, again, other = build(world, seed=7), build(world, seed=7), build(world, seed=8)
    assert [r["context"] for r in first] == [r["context"] for r in again]
    depths = [p["depth"] for r in first for p in r["evidence_positions"]]
    moved = [p["depth"] for r in other for p in r["evidence_positions"]]
    assert depths != moved


def test_distractors_never_state_the_answer(world) -> None:
    for row in build(world):
        if row["variant"] == "clean":
            answer = row["answers"][0]
            assert row["context"].count(answer) == 1


def test_a_corpus_too_small_for_the_level_is_an_error_that_says_so() -> None:
    item, support = make_item(0)
    corpus = Corpus([*make_corpus(n=3), support])
    with pytest.raises(AssemblyError, match=r"fills \d+ of 50000 words"):
        assemble(item, corpus, 50000, random.Random(0), tolerance=TOLERANCE)


def scanned_distractors(passages: list[Passage], item: QAItem) -> list[int]:
    """The distractors as every passage scanned against every answer."""
    needles = [n for n in (normal_form(a) for a in item.answers) if n.strip()]
    return [
        i
        for i, p in enumerate(passages)
        if p.passage_id not in item.supporting_ids
        and not any(n in normal_form(p.text) for n in needles)
    ]


def test_a_large_pool_gives_the_distractors_and_order_of_a_full_scan_and_shuffle() -> None:
    rng = random.Random(3)
    places = ["Port Imre", "Imre", "New York", "New Yorkers", "Caro", "Sorrel Bay", "23", "230"]
    passages = [
        Passage(f"d{k:05d}", "synthetic", "", f"{_sentence(rng)} {rng.choice(places)} held.")
        for k in range(SHORT + 500)
    ]
    item, support = make_item(0)
    passages.append(support)
    passages.append(Passage(support.passage_id, "synthetic", "", "A second copy of the id."))
    corpus = Corpus(passages)
    for answers in [("Imre",), ("New York", "23"), ("the",), ("York",), ("Sorrel Bay",)]:
        probe = dataclasses.replace(item, answers=answers)
        expected = scanned_distractors(passages, probe)
        assert corpus.distractors(probe) == expected
        words = sum(corpus.words[i] + HEADER_WORDS for i in expected)
        assert corpus.distractor_words(probe) == words
        python, bulk = random.Random(f"7:{answers}"), random.Random(f"7:{answers}")
        python.shuffle(expected)
        assert list(corpus.shuffled(probe, bulk)) == expected
        assert bulk.getstate() == python.getstate()
