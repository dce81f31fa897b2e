"""Offline answers for every SummHay prompt: the ``template`` backend's responders.

Insights carry a unique number (derived from the subtopic and insight index), so the inclusion
check is exact: an insight is present when its sentence is. Documents are the planned insight
sentences placed among filler prose, taken from the web stage's extracted documents when there
are any, so template haystacks read like the corpus around them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from builders.summhay.verify import word_set
from builders.text import sentences

THEMES: dict[str, tuple[tuple[str, str], ...]] = {
    "news": (
        ("Emergency response", "how crews, shelters and evacuations were organised"),
        ("Economic losses", "what the event cost businesses, farms and households"),
        ("Infrastructure damage", "which roads, bridges, lines and buildings were hit"),
        ("Political reaction", "what officials, parties and councils said and decided"),
        ("Public health", "injuries, hospital admissions and health warnings"),
        ("Relief funding", "money pledged and paid out by governments and charities"),
        ("Official investigation", "inquiries into causes, warnings and responsibility"),
        ("Environmental impact", "effects on rivers, wildlife, soil and air"),
        ("Transport disruption", "cancelled services, closed routes and detours"),
        ("Community recovery", "volunteers, rebuilding and returning residents"),
    ),
    "conversation": (
        ("Study schedule", "when and how often the group plans to meet and revise"),
        ("Stress management", "how each person copes with pressure and sleep"),
        ("Group roles", "who takes charge of which part of the work"),
        ("Shared budget", "what the group spends and how costs are split"),
        ("Tools and software", "which apps, notes and devices they rely on"),
        ("Deadline planning", "which dates matter and what must be ready by then"),
        ("Feedback sessions", "how they review each other's work"),
        ("Travel arrangements", "how they get to the venue and where they stay"),
    ),
}
UNITS = (
    "households",
    "volunteers",
    "kilometres of road",
    "tonnes of supplies",
    "complaints",
    "euros in claims",
    "staff",
    "reports",
)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
SYLLABLES = ("ma", "ri", "to", "ven", "ka", "lo", "se", "dra", "mi", "nor", "ta", "bel")
FALLBACK_FILLER = {
    "news": (
        "Reporters spoke to residents throughout the week.",
        "Local officials promised further updates as information became available.",
        "Several neighbouring towns followed the situation closely.",
        "The regional broadcaster carried live coverage for most of the day.",
        "Analysts cautioned that early figures are often revised.",
        "Community groups organised meetings in school halls and churches.",
        "The weather service issued its routine bulletin in the morning.",
        "Readers sent in photographs and accounts from their streets.",
    ),
    "conversation": (
        "That sounds reasonable to me.",
        "Let's write that down so we do not forget it.",
        "I was thinking about the same thing yesterday.",
        "We can come back to this point later.",
        "Does everyone agree with that?",
        "I will check my notes and tell you tonight.",
        "Honestly, I had not thought about it that way.",
        "Can you say that again, a bit slower?",
        "My sister went through the same thing last year.",
        "I think we are overcomplicating this.",
        "Let's not spend the whole evening on it.",
        "Fair enough, but we should keep it in mind.",
        "I'll put it in the shared document after this call.",
        "That reminds me of what the tutor said on Monday.",
        "Wait, I lost my notes for a second.",
        "Okay, so what is the next thing on the list?",
    ),
}
STYLES: dict[str, tuple[str, ...]] = {
    "news": (
        "a breaking-news report",
        "an analysis piece",
        "a feature built around interviews",
        "a local-angle report",
        "a follow-up report a few days later",
        "a short explainer",
    ),
    "conversation": (
        "a relaxed chat",
        "a planning call",
        "a heated discussion",
        "a late-night study session",
        "a quick catch-up between classes",
        "a meeting with a shared agenda",
    ),
}
"""Document styles, drawn per document, so no two documents get the same prompt."""


def _hash(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def _name(*parts: object) -> str:
    h = _hash(*parts)
    first = "".join(SYLLABLES[(h >> (4 * i)) % len(SYLLABLES)] for i in range(2)).title()
    last = "".join(SYLLABLES[(h >> (4 * i + 16)) % len(SYLLABLES)] for i in range(3)).title()
    return f"{first} {last}"


def subtopics(v: Mapping[str, Any]) -> str:
    """``n`` distinct themes of the domain, rotated by the topic."""
    themes = THEMES[v["domain"]]
    start = _hash(v["topic"]) % len(themes)
    picked = [themes[(start + i) % len(themes)] for i in range(min(v["n"], len(themes)))]
    return json.dumps({"subtopics": [{"name": n, "description": d} for n, d in picked]})


def insights(v: Mapping[str, Any]) -> str:
    """``n`` sentences about the subtopic, each with a number unique in the haystack."""
    theme = v["subtopic"]["name"].lower()
    base = 1000 + _hash(v["topic"]) % 8000
    out = []
    for i in range(v["n"]):
        number = base + 37 * (v["index"] * 20 + i)
        unit = UNITS[(v["index"] + i) % len(UNITS)]
        day = 1 + (v["index"] * 7 + i * 3) % 28
        month = MONTHS[(v["index"] + i) % 12]
        who = _name(v["topic"], v["index"], i)
        if v["domain"] == "conversation":
            text = f"{who} says the {theme} plan needs {number:,} {unit} before {day} {month}."
        else:
            text = f"{who} said the {theme} count reached {number:,} {unit} by {day} {month}."
        out.append(text)
    return json.dumps({"insights": out})


def classify(v: Mapping[str, Any]) -> str:
    """Assign each insight the subtopic whose name (then description) shares most words."""
    assignments = []
    for insight in v["insights"]:
        words = word_set(insight["text"])

        def score(s: Mapping[str, Any], words: frozenset[str] = words) -> tuple[int, int]:
            return len(word_set(s["name"]) & words), len(word_set(s["description"]) & words)

        best = max(v["subtopics"], key=score)
        assignments.append(
            {"insight_id": insight["insight_id"], "subtopic_id": best["subtopic_id"]}
        )
    return json.dumps({"assignments": assignments})


def inclusion(v: Mapping[str, Any]) -> str:
    """The insights whose exact sentence occurs in the document."""
    text = v["document"]
    return json.dumps({"present": [i["insight_id"] for i in v["insights"] if i["text"] in text]})


def queries(v: Mapping[str, Any]) -> str:
    """One question per subtopic."""
    return json.dumps(
        {
            "queries": [
                {
                    "subtopic_id": s["subtopic_id"],
                    "query": f"What do the documents report about {s['name'].lower()}?",
                }
                for s in v["subtopics"]
            ]
        }
    )


def filler_sentences(texts: Sequence[str], limit: int = 5000) -> tuple[str, ...]:
    """Sentences of 6 to 40 words from ``texts``, at most ``limit``, for template documents."""
    out: list[str] = []
    for text in texts:
        for start, end in sentences(text):
            sentence = " ".join(text[start:end].split())
            if 6 <= len(sentence.split()) <= 40 and sentence[-1:] in ".!?":
                out.append(sentence)
                if len(out) >= limit:
                    return tuple(out)
    return tuple(out)


MIN_POOL = 30
"""Fewer filler sentences than this for a topic and the shared pool is used instead."""


def document_responder(filler: Mapping[str, Sequence[str]]) -> Any:
    """The responder for ``summhay/document``, writing news around filler sentences: the topic's
    own (``filler[topic_id]``) when it has enough, else the shared pool (``filler[""]``).
    Conversations use conversational filler."""

    def document(v: Mapping[str, Any]) -> str:
        domain = v["domain"]
        pool: Sequence[str] = FALLBACK_FILLER[domain]
        if domain == "news":
            own = filler.get(v["topic_id"], ())
            pool = own if len(own) >= MIN_POOL else (filler.get("", ()) or pool)
        h = _hash(v["document_id"], v["topic"])
        target = v["words"]
        planned = list(v["insights"])
        lines: list[str] = []
        words = 0
        speakers = list(v["participants"]) or ["A", "B"]
        k = 0
        # spread the insights evenly through the filler
        per_gap = max(1, (target - sum(len(s.split()) for s in planned)) // (len(planned) + 1))
        while planned or words < target:
            gap = 0
            while gap < per_gap and (words < target or not lines):
                sentence = pool[(h + k * 7919) % len(pool)]
                k += 1
                lines.append(sentence)
                gap += len(sentence.split())
                words += len(sentence.split())
                if len(lines) > 10 * target:
                    break
            if planned:
                sentence = planned.pop(0)
                lines.append(sentence)
                words += len(sentence.split())
            elif words >= target:
                break
        if domain == "conversation":
            body = "\n".join(f"{speakers[i % len(speakers)]}: {s}" for i, s in enumerate(lines))
        else:
            paragraphs = [" ".join(lines[i : i + 4]) for i in range(0, len(lines), 4)]
            body = f"{v['voice']}: {v['topic']}\n\n" + "\n\n".join(paragraphs)
        return body

    return document


def responders(filler: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """Every SummHay prompt's template responder; ``filler`` as in :func:`document_responder`."""
    return {
        "summhay/subtopics": subtopics,
        "summhay/insights": insights,
        "summhay/classify": classify,
        "summhay/document": document_responder(filler or {}),
        "summhay/inclusion": inclusion,
        "summhay/queries": queries,
    }
