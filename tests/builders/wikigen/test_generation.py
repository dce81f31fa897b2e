"""Taking generated articles apart, WikiGenBench's citation scores, and the template judge."""

from __future__ import annotations

import json

import pytest

from builders.wikigen import responders
from builders.wikigen.generation import (
    Claim,
    article_claims,
    citation_scores,
    outline,
    sections,
)

ARTICLE = """==Introduction== The 2022 final was played at Wembley. It decided promotion.[2]
==Date and Venue== It took place on 21 May 2022.[2][3] The stadium holds 90,000 people.[1, 9]
== Tickets ==
Tickets went on sale in May. [3]
"""


def test_sections_sentences_and_citations_are_taken_apart() -> None:
    assert [h for h, _ in sections(ARTICLE)] == ["Introduction", "Date and Venue", "Tickets"]
    found = article_claims(ARTICLE, ["a", "b", "c"])
    assert [(c.section, c.cited) for c in found] == [
        ("Introduction", ()),
        ("Introduction", ("b",)),
        ("Date and Venue", ("b", "c")),
        ("Date and Venue", ("a", "")),  # [9] names no document shown
        ("Tickets", ("c",)),
    ]
    assert found[3].text == "The stadium holds 90,000 people."
    # text before any heading is kept, under no heading
    assert article_claims("Lead sentence here.[1]", ["a"]) == [
        Claim("", "Lead sentence here.", ("a",))
    ]


def test_citation_scores_follow_the_paper_formulas() -> None:
    found = [
        Claim("", "one two three four", ("a", "b")),
        Claim("", "one two three four five six", ()),
        Claim("", "one two three four five six seven eight nine ten", ("c",)),
    ]
    scores = citation_scores(found, [[True, False], [], [False]])
    assert scores.sentences == 3 and scores.cited_sentences == 2
    assert scores.recall == pytest.approx(1 / 3)
    assert scores.precision == pytest.approx(0.5 / 3)
    assert scores.rate == pytest.approx(4 / 20)
    assert citation_scores([], []).recall == 0.0


def test_outline_lines_are_read_in_any_common_form() -> None:
    text = (
        "Here is the outline:\n1. Introduction\n2) Background\n- Impact\n==Aftermath==\n3. Impact"
    )
    assert outline(text, 10) == ["Introduction", "Background", "Impact", "Aftermath"]
    assert outline(text, 2) == ["Introduction", "Background"]
    assert outline("no list at all", 5) == []


def test_the_template_judge_wants_the_numbers_and_names_of_the_claim() -> None:
    premise = "The Meridal River rose by 2.4 metres at the city gauge on Tuesday after heavy rain."
    claim = "The Meridal River rose by 2.4 metres on Tuesday."
    assert json.loads(responders.entails({"premise": premise, "claim": claim}))["entails"]
    changed = "The Meridal River rose by 3.1 metres on Tuesday."
    assert not json.loads(responders.entails({"premise": premise, "claim": changed}))["entails"]
    other = "The Sorrel Bay levee failed on Tuesday."
    assert not json.loads(responders.entails({"premise": premise, "claim": other}))["entails"]


def test_the_template_writer_cites_whole_sentences_of_the_documents_shown() -> None:
    documents = [
        {"n": 1, "text": "Cyclone Imre reached Port Imre on Saturday night. The wind tore the"},
        {"n": 2, "text": "Crews restored power in Port Imre after Cyclone Imre passed over."},
    ]
    article = responders.write_article({"title": "Cyclone Imre", "documents": documents})
    found = article_claims(article, ["d1", "d2"])
    assert {c.cited for c in found} == {("d1",), ("d2",)}
    assert all(c.text.endswith(".") for c in found)  # the cut sentence is not copied
    plan = outline(responders.plan_outline({"title": "Cyclone Imre", "documents": documents,
                                          "sections": 3}), 3)  # fmt: skip
    assert plan[0] == "Introduction" and len(plan) == 3 and "Cyclone" not in plan
