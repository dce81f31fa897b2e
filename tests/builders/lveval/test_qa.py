"""QA items: quotes located in passages, answers checked against evidence, template questions."""

from __future__ import annotations

import json

from builders.lveval.answers import QuestionDraft, QuestionsAnswer, Quote
from builders.lveval.qa import locate, to_item
from builders.lveval.records import Passage, QAItem
from builders.lveval.responders import answer, clean, dated_facts, questions

LEAD = Passage(
    "ev#lead", "ev", "Cyclone Imre",
    "Cyclone Imre was a severe tropical cyclone that struck the Caro Islands in January 2026. "
    "Forming on 14 January, it passed close to Port Imre on 17 January.",
)  # fmt: skip
IMPACT = Passage(
    "ev#s1", "ev", "Cyclone Imre: Impact",
    "Imre killed 23 people, 15 of them in the Caro Islands,\nand left four missing. "
    "About 21,500 people were evacuated from the coast.",
)  # fmt: skip
PASSAGES = {p.passage_id: p for p in (LEAD, IMPACT)}


def draft(question: str, answers: list[str], quotes: list[tuple[str, str]], hops: int = 1):
    return QuestionDraft(
        question=question,
        answers=answers,
        hops=hops,
        evidence=[Quote(passage_id=p, quote=q) for p, q in quotes],
    )


def test_quotes_are_located_verbatim_or_across_whitespace_differences() -> None:
    span = locate(IMPACT, "15 of them in the Caro Islands, and left four missing.")
    assert span and IMPACT.text[span[0] : span[1]].startswith("15 of them")
    assert locate(IMPACT, "a sentence that is not there") is None


def test_a_checked_draft_becomes_an_item_with_a_stable_id_and_exact_spans() -> None:
    d = draft("How many people did Imre kill?", ["23"], [("ev#s1", "Imre killed 23 people")])
    item = to_item(d, PASSAGES, dataset="events_mixup", source="ev")
    assert isinstance(item, QAItem)
    assert item.qa_id == to_item(d, PASSAGES, dataset="events_mixup", source="ev").qa_id
    e = item.evidence[0]
    assert IMPACT.text[e.start : e.end] == e.text == "Imre killed 23 people"
    assert item.answer_keywords == "23" and item.supporting_ids == ("ev#s1",)


def test_drafts_failing_a_check_come_back_with_the_reason() -> None:
    wrong = draft("How many died?", ["31"], [("ev#s1", "Imre killed 23 people")])
    assert to_item(wrong, PASSAGES, dataset="d", source="ev")[0] == "answer_not_in_evidence"
    missing = draft("How many died?", ["23"], [("ev#s9", "Imre killed 23 people")])
    assert to_item(missing, PASSAGES, dataset="d", source="ev")[0] == "evidence_not_found"
    made_up = draft("How many died?", ["23"], [("ev#s1", "Imre killed 23 cattle")])
    assert to_item(made_up, PASSAGES, dataset="d", source="ev")[0] == "evidence_not_found"
    one = draft("How many?", ["23"], [("ev#s1", "Imre killed 23 people")], hops=2)
    assert to_item(one, PASSAGES, dataset="d", source="ev")[0] == "multi_hop_single_evidence"


def test_infobox_values_lose_notes_and_hedges_and_dates_get_shorter_forms() -> None:
    assert clean("about 21,500 (estimated)") == ["21,500"]
    assert clean("1.9 billion VCR (estimated)") == ["1.9 billion VCR", "1.9 billion"]
    assert clean("14–22 January 2026", "date") == [
        "14–22 January 2026",
        "14 January 2026",
        "14 January",
    ]


def test_template_questions_quote_the_sentence_that_states_each_infobox_value() -> None:
    variables = {
        "name": "Cyclone Imre",
        "kind": "weather event",
        "infobox": [
            {"key": "date", "value": "14–22 January 2026"},
            {"key": "location", "value": "Caro Islands"},
            {"key": "deaths", "value": "23"},
            {"key": "evacuated", "value": "about 21,500"},
            {"key": "pressure", "value": "938 hPa"},
        ],
        "passages": [{"passage_id": p.passage_id, "text": p.text} for p in PASSAGES.values()],
        "n": 4,
        "multi_hop": 2,
    }
    answer_ = QuestionsAnswer.model_validate(json.loads(questions(variables)))
    items = [to_item(d, PASSAGES, dataset="d", source="ev") for d in answer_.questions]
    assert all(isinstance(i, QAItem) for i in items)
    asked = {i.question: i.answers for i in items}
    assert asked["When did Cyclone Imre take place?"] == ("14 January",)
    assert asked["How many people were killed in Cyclone Imre?"] == ("23",)
    assert asked["How many people were evacuated during Cyclone Imre?"] == ("21,500",)
    multi = [i for i in items if i.hops == 2]
    assert multi and all(len(i.evidence) == 2 for i in multi)
    assert all("Cyclone Imre" not in i.question and "Caro Islands" in i.question for i in multi)


def test_the_reference_answerer_extracts_from_the_best_matching_sentence() -> None:
    context = "### Passage 1\n" + IMPACT.text + "\n\n### Passage 2\n" + LEAD.text
    assert answer({"question": "How many people did Imre kill?", "context": context}) == "23"
    when = answer({"question": "When did Imre start forming?", "context": context})
    assert when == "14 January"  # the first date of the best sentence


def test_dated_sentences_become_date_questions_quoting_them() -> None:
    text = (
        "Rain fell all week. On 5 March the levee at Meridal was breached. "
        "On 9 March, Officials reopened the road. On 7 March the review led by Dr. Holm began."
    )
    passage = Passage("ev#s2", "ev", "Floods", text)
    found = dated_facts([{"passage_id": passage.passage_id, "text": passage.text}])
    assert [(q["question"], q["answers"]) for q in found] == [
        ("What was the date when the levee at Meridal was breached?", ["5 March"]),
        ("What was the date when Officials reopened the road?", ["9 March"]),
        ("What was the date when the review led by Dr. Holm began?", ["7 March"]),
    ]
    drafts = QuestionsAnswer.model_validate({"questions": found}).questions
    items = [to_item(d, {passage.passage_id: passage}, dataset="d", source="ev") for d in drafts]
    assert all(isinstance(i, QAItem) for i in items)
