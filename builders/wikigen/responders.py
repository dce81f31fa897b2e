"""Offline answers for the WikiGenBench baseline prompts: the ``template`` backend's responders.

The writer is extractive, a real (weak) baseline: it copies the whole document sentences that
share most keywords with the topic (and section), citing the document each came from. The
planner names a section after each of the words most documents share beyond the title's. The
entailment judge is lexical: a document entails a sentence when it holds every number and
capitalised name of the sentence and most of its keywords.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from builders.text import keywords, sentences, specific_tokens

_ENDED = re.compile(r"[.!?][\"')\u201d]*$")
KEYWORD_SHARE = 0.6
"""Share of a sentence's keywords the judge wants in the document."""


def _best_sentences(
    query: str, documents: Sequence[Mapping[str, Any]], n: int
) -> list[tuple[str, int]]:
    """Up to ``n`` distinct document sentences of 6 words or more sharing most keywords with
    ``query``, as ``(sentence, document number)``, best first, ties in document order."""
    wanted = keywords(query)
    found: dict[str, tuple[int, int, int]] = {}
    for doc in documents:
        text = doc["text"]
        for position, (start, end) in enumerate(sentences(text)):
            sentence = " ".join(text[start:end].split())
            if len(sentence.split()) < 6 or not _ENDED.search(sentence) or sentence in found:
                continue
            found[sentence] = (-len(wanted & keywords(sentence)), doc["n"], position)
    best = sorted(found, key=found.__getitem__)[:n]
    return [(s, found[s][1]) for s in best]


def _cited(picked: Sequence[tuple[str, int]]) -> str:
    return " ".join(f"{s}[{n}]" for s, n in picked)


def write_article(v: Mapping[str, Any]) -> str:
    """``wikigen/rr``: an introduction of the best sentences for the topic, in document order."""
    picked = _best_sentences(v["title"], v["documents"], v.get("sentences", 8))
    return f"==Introduction==\n{_cited(picked)}\n"


def plan_outline(v: Mapping[str, Any]) -> str:
    """``wikigen/outline``: Introduction, then one section per word of four letters or more
    found in most documents, title words and numbers aside (ties alphabetical)."""
    title = keywords(v["title"])
    spread = Counter(w for d in v["documents"] for w in keywords(d["text"]) - title
                     if len(w) >= 4 and not w.isdigit())  # fmt: skip
    common = sorted(spread, key=lambda w: (-spread[w], w))[: v["sections"] - 1]
    names = ["Introduction", *(w.capitalize() for w in common)]
    return "\n".join(f"{i}. {name}" for i, name in enumerate(names, 1))


def write_section(v: Mapping[str, Any]) -> str:
    """``wikigen/section``: the best sentences for the topic and the section."""
    query = f"{v['title']} {'' if v['section'] == 'Introduction' else v['section']}"
    return _cited(_best_sentences(query, v["documents"], v.get("sentences", 3)))


def entails(v: Mapping[str, Any]) -> str:
    """``wikigen/entails``: every specific token of the claim in the premise, and most of its
    keywords."""
    claim, premise = v["claim"], v["premise"]
    wanted = keywords(claim)
    shared = len(wanted & keywords(premise)) / len(wanted) if wanted else 0.0
    holds = specific_tokens(claim) <= specific_tokens(premise) | keywords(premise)
    return json.dumps({"entails": bool(holds and shared >= KEYWORD_SHARE)})


def responders() -> dict[str, Any]:
    """Every WikiGenBench baseline prompt's template responder."""
    return {
        "wikigen/rr": write_article,
        "wikigen/outline": plan_outline,
        "wikigen/section": write_section,
        "wikigen/entails": entails,
    }
