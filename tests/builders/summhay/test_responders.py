"""Template answers: unique insight values, exact documents, correct classification."""

from __future__ import annotations

import json
import re

from builders.summhay import responders

BASE = {
    "topic_id": "t1",
    "topic": "A storm hits the coast of Valdra",
    "domain": "news",
    "participants": ["Herald"],
}


def _insights(index: int, n: int = 6) -> list[str]:
    subtopic = json.loads(responders.subtopics({**BASE, "n": 8}))["subtopics"][index - 1]
    return json.loads(responders.insights({**BASE, "subtopic": subtopic, "index": index, "n": n}))[
        "insights"
    ]


def test_insight_numbers_are_unique_across_the_haystack() -> None:
    numbers = [re.search(r"\d[\d,]+", s).group() for i in range(1, 9) for s in _insights(i)]
    assert len(numbers) == 48 == len(set(numbers))


def test_classifier_finds_each_template_insight_its_subtopic() -> None:
    subtopics = json.loads(responders.subtopics({**BASE, "n": 8}))["subtopics"]
    subs = [{"subtopic_id": f"S{i + 1}", **s} for i, s in enumerate(subtopics)]
    items = [
        {"insight_id": f"S{i}.{k}", "text": t}
        for i in range(1, 9)
        for k, t in enumerate(_insights(i))
    ]
    answer = json.loads(responders.classify({**BASE, "subtopics": subs, "insights": items}))
    assert all(a["subtopic_id"] == a["insight_id"].split(".")[0] for a in answer["assignments"])


def test_document_carries_exactly_its_insights_and_reaches_the_length() -> None:
    planned, other = _insights(1, 3), _insights(2, 2)
    filler = {"": tuple(f"Filler sentence number {n} about the weather today." for n in range(40))}
    write = responders.document_responder(filler)
    text = write(
        {
            **BASE,
            "document_id": "D01",
            "voice": "Herald",
            "words": 200,
            "insights": planned,
            "feedback": "",
        }
    )
    assert len(text.split()) >= 200
    items = [{"insight_id": f"i{n}", "text": t} for n, t in enumerate(planned + other)]
    present = json.loads(responders.inclusion({"document": text, "insights": items}))["present"]
    assert present == ["i0", "i1", "i2"]


def test_filler_sentences_keep_whole_sentences_of_useful_length() -> None:
    text = "Short one. This sentence has exactly enough words to be kept here. Another ends without"
    assert responders.filler_sentences([text]) == (
        "This sentence has exactly enough words to be kept here.",
    )
