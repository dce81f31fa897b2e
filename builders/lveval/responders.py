"""Offline answers for every LV-Eval prompt: the ``template`` backend's responders.

Questions come from infobox fields whose value a passage states ("When did ...?", "How many
... were killed ...?", "Where ...?"), quoting that sentence; a multi-hop question names the
event by a second fact (its location) instead of its title. Confusing facts are the rule-based
perturbation, replacements the seeded name generator, and the reference answerer extracts a
date, number or place from the context sentence that best matches the question.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from builders.lveval import cfi, kpr
from builders.lveval.records import Evidence, QAItem
from builders.text import sentence_lines, sentences, tokens

QUESTIONS: dict[str, tuple[str, str]] = {
    # field: (question with {name}, words the stating sentence must contain, "|"-separated)
    "date": ("When did {name} take place?", ""),
    "location": ("Where did {name} take place?", ""),
    "venue": ("Where was {name} held?", ""),
    "deaths": ("How many people were killed in {name}?", "kill|died|dead|death|fatal|lives"),
    "fatalities": ("How many people were killed in {name}?", "kill|died|dead|death|fatal|lives"),
    "injuries": ("How many people were injured in {name}?", "injur|hurt|wound"),
    "evacuated": ("How many people were evacuated during {name}?", "evacuat"),
    "missing": ("How many people were reported missing after {name}?", "missing"),
    "passengers": ("How many passengers were on board in {name}?", "passenger"),
    "attendance": ("How many people attended {name}?", "attend|spectator|crowd|visitor"),
    "damage": ("How much damage did {name} cause?", "damage|loss|cost"),
    "operator": ("Which company operated the service involved in {name}?", "operat"),
    "magnitude": ("What was the magnitude of {name}?", "magnitude"),
    "champion": ("Who won {name}?", "won|champion|title"),
    "turnout": ("What was the turnout in {name}?", "turnout"),
}
BRIDGE_FIELDS = ("location", "venue")
_PARENS = re.compile(r"\s*\([^)]*\)")
_HEDGES = re.compile(
    r"^(?:about|approximately|around|roughly|at least|over|more than|some)\s+", re.I
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?:\s(?:million|billion))?")
_MONTH = "|".join(cfi.MONTHS)
_DATE = re.compile(rf"\b\d{{1,2}}(?:[–-]\d{{1,2}})? (?:{_MONTH})(?: \d{{4}})?\b")
_DATED = re.compile(rf"On (\d{{1,2}} (?:{_MONTH})(?: \d{{4}})?),? ([^,].{{10,200}}?)[.]$")
_ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|St|Prof|Gen|No)$")
_PASSAGE_HEADER = re.compile(r"### Passage \d+\n")
_PLACE = re.compile(r"\b(?:in|at|near|on) ((?:[A-Z][a-z]+ ?){1,4})")


def clean(value: str, field: str = "") -> list[str]:
    """Answer candidates of an infobox value: the value without notes and hedges, then a
    shorter form (a date range's first day, or month and year; another value's number)."""
    text = _HEDGES.sub("", _PARENS.sub("", value)).strip(" ,;")
    out = [text] if text else []
    if field == "date":
        day = re.match(rf"(\d{{1,2}})(?:[–-]\d{{1,2}})? ({_MONTH})(?: (\d{{4}}))?", text)
        if day:
            out += [f"{day[1]} {day[2]} {day[3]}".strip(), f"{day[1]} {day[2]}"]
        return list(dict.fromkeys(out))
    number = _NUMBER.search(text)
    if number and number[0] != text:
        out.append(number[0])
    return out


def _stating(passages: Sequence[Mapping[str, str]], value: str, cue: str) -> tuple[str, str] | None:
    """The first passage sentence stating ``value`` (and a cue word): (passage_id, sentence)."""
    pattern = re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", re.I)
    cues = re.compile(cue, re.I) if cue else None
    for passage in passages:
        text = passage["text"]
        for start, end in sentences(text):
            sentence = text[start:end]
            if pattern.search(sentence) and (cues is None or cues.search(sentence)):
                return passage["passage_id"], sentence
    return None


def _fact(passages: Sequence[Mapping[str, str]], field: str, value: str) -> dict[str, Any] | None:
    cue = QUESTIONS[field][1]
    for answer in clean(value, field):
        found = _stating(passages, answer, cue)
        if found:
            return {"answer": answer, "passage_id": found[0], "quote": found[1]}
    return None


def dated_facts(passages: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """Questions from dated sentences ("On 5 March the levee was breached." -> "What was the
    date when the levee was breached?"), answered by the date."""
    lower = {w for p in passages for w in re.findall(r"\b[a-z]+\b", p["text"])}
    out = []
    for passage in passages:
        text = passage["text"]
        for start, end in sentences(text):
            match = _DATED.match(text[start:end])
            if not match:
                continue
            date, clause = match[1], match[2]
            if _ABBREVIATION.search(clause):  # the sentence was cut at "Dr." or "St."
                continue
            first = clause.split(" ", 1)[0]
            if first.lower() in lower:  # a common word starting the sentence, not a name
                clause = first.lower() + clause[len(first) :]
            out.append(
                {
                    "question": f"What was the date when {clause}?",
                    "answers": [date],
                    "answer_keywords": date,
                    "hops": 1,
                    "evidence": [{"passage_id": passage["passage_id"], "quote": text[start:end]}],
                }
            )
    return out


def questions(v: Mapping[str, Any]) -> str:
    """``lveval/questions``: single-hop questions from infobox fields, then from dated facts,
    then multi-hop ones."""
    passages = v["passages"]
    facts = {}
    for row in v["infobox"]:
        if row["key"] in QUESTIONS and row["value"].strip():
            fact = _fact(passages, row["key"], row["value"])
            if fact:
                facts[row["key"]] = fact
    out = []
    for field, fact in list(facts.items())[: v["n"]]:
        out.append(
            {
                "question": QUESTIONS[field][0].format(name=v["name"]),
                "answers": [fact["answer"]],
                "answer_keywords": fact["answer"],
                "hops": 1,
                "evidence": [{"passage_id": fact["passage_id"], "quote": fact["quote"]}],
            }
        )
    out += dated_facts(passages)[: v["n"] - len(out)]
    bridge = next((facts[f] for f in BRIDGE_FIELDS if f in facts), None)
    singles = len(out)
    if bridge:
        kind = v.get("kind") or "event"
        for field, fact in facts.items():
            if field in BRIDGE_FIELDS or fact["quote"] == bridge["quote"]:
                continue
            if len(out) - singles >= v["multi_hop"]:
                break
            name = f"the {kind} in {bridge['answer']}"
            out.append(
                {
                    "question": QUESTIONS[field][0].format(name=name),
                    "answers": [fact["answer"]],
                    "answer_keywords": fact["answer"],
                    "hops": 2,
                    "evidence": [
                        {"passage_id": bridge["passage_id"], "quote": bridge["quote"]},
                        {"passage_id": fact["passage_id"], "quote": fact["quote"]},
                    ],
                }
            )
    return json.dumps({"questions": out})


def _item(v: Mapping[str, Any]) -> QAItem:
    evidence = tuple(Evidence("", 0, len(t), t) for t in v["evidence"])
    return QAItem(v["qa_id"], "", "en", "", 1, v["question"], tuple(v["answers"]), "", evidence)


def fact_responder(seed: int) -> Any:
    """``lveval/confusing_fact``: the rule-based perturbation, swapping in one of the names the
    ask lists (``{"fact": ""}`` when none fits)."""

    def fact(v: Mapping[str, Any]) -> str:
        rng = random.Random(f"{seed}:{v['qa_id']}:cfi")
        return json.dumps({"fact": cfi.perturb(_item(v), rng, v.get("names") or []) or ""})

    return fact


def rules_responder(seed: int) -> Any:
    """``lveval/keywords``: the seeded name generator over the names the ask lists."""

    def rules(v: Mapping[str, Any]) -> str:
        proposed = kpr.propose(_item(v), v.get("names") or [], seed, v["max_rules"])
        return json.dumps({"rules": [{"orig": r.orig, "repl": r.repl} for r in proposed]})

    return rules


LINES_KEPT = 8_192
"""Lines whose sentences :func:`answer` keeps with their tokens: about 6 kB each (measured on
the snapshot's passages), so at most about 50 MB. A passage's lines come back in its item's
other variants and levels, and in other items' contexts."""


@lru_cache(maxsize=LINES_KEPT)
def _line_sentences(line: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The sentences of one line with their tokens."""
    return tuple((line[a:b], frozenset(tokens(line[a:b]))) for a, b in sentences(line))


def _sentence_tokens(text: str) -> list[tuple[str, frozenset[str]]]:
    """Every sentence of ``text`` (as :func:`sentences` splits it) with its tokens, line by line
    from the kept lines; the whole text at once when a line opens with a citation mark."""
    lines = sentence_lines(text)
    if lines is None:
        return [(text[a:b], frozenset(tokens(text[a:b]))) for a, b in sentences(text)]
    return [pair for line in lines for pair in _line_sentences(line)]


def answer(v: Mapping[str, Any]) -> str:
    """``lveval/answer``: the date, number or place of the context sentence sharing the most
    words with the question (the whole sentence when it has none)."""
    question = set(tokens(v["question"])) - kpr.NOT_NAMES
    best, score = "", 0
    for sentence, words in _sentence_tokens(_PASSAGE_HEADER.sub("\n", v["context"])):
        overlap = len(question & words)
        if overlap > score:
            best, score = sentence, overlap
    asks = v["question"].lower()
    pattern = _DATE if asks.startswith("when") else _PLACE if asks.startswith("where") else None
    if asks.startswith("how"):
        pattern = _NUMBER
    match = pattern.search(best) if pattern else None
    if match:
        return match[1] if match.groups() else match[0]
    return best.strip()


def answer_responders() -> dict[str, Any]:
    """The reference answerer's responder alone (the baselines stage needs only this)."""
    return {"lveval/answer": answer}


def responders(seed: int) -> dict[str, Any]:
    """Every LV-Eval prompt's template responder: each answers from its ask's variables (and
    the stage's seed) alone."""
    return {
        "lveval/questions": questions,
        "lveval/confusing_fact": fact_responder(seed),
        "lveval/keywords": rules_responder(seed),
        **answer_responders(),
    }
