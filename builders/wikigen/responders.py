"""Offline answers for the WikiGenBench baseline prompts: the ``template`` backend's responders.

The writer is extractive, a real (weak) baseline: it copies the whole document sentences that
share most keywords with the topic (and section), citing the document each came from. The
planner names a section after each of the words most documents share beyond the title's. The
entailment judge is lexical: a document entails a sentence when it holds every number and
capitalised name of the sentence and most of its keywords.

The writing and informativeness judges are **stand-ins**, not judgments: deterministic counts
mapped onto each score's scale, answered in the paper's reply formats so that the readers run
as they do on a model's replies. Fluency is the share of sentences of 5 to 40 words that end
with a stop; Info a point per 8 distinct numbers and names (at most 5); Outline a point per
distinct heading (at most 5); Organization 1 plus a point per section beyond the first; Focus
1 plus 4 times the share of sentences that share a keyword with the title; Coverage 1 plus a
point per 150 words. Faithfulness is always 3. Their figures say nothing about an article's
quality; they only keep ``make repro`` offline.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from builders.text import keywords, sentences, specific_tokens

_ENDED = re.compile(r"[.!?][\"')\u201d]*$")
_HEADING = re.compile(r"^[ \t]*={2,}[^=\n]+={2,}[ \t]*$", re.M)
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


def _sentences_of(text: str) -> list[str]:
    return [" ".join(text[a:b].split()) for a, b in sentences(text)]


def _plain(text: str) -> list[str]:
    """The sentences of a judged article, its ``==Heading==`` lines left out."""
    return [s for s in _sentences_of(text) if not s.startswith("==")]


def rate_quality(v: Mapping[str, Any]) -> str:
    """``wikigen/quality`` stand-in: fluency from well-formed sentences, info from names."""
    found = _plain(v["article"])
    fine = [s for s in found if 5 <= len(s.split()) <= 40 and _ENDED.search(s)]
    fluency = round(5 * len(fine) / len(found)) if found else 0
    info = min(5, len(specific_tokens(v["article"])) // 8)
    return f"Fluency: {fluency}, Informativeness: {info}, Faithfulness: 3"


def rate_outline(v: Mapping[str, Any]) -> str:
    """``wikigen/outline_score`` stand-in: a point per distinct heading, at most 5."""
    return str(min(5, len({h.lower() for h in v["headings"]})))


def grade_rubric(v: Mapping[str, Any]) -> str:
    """``wikigen/rubric`` stand-in: Organization from sections, Focus from on-title sentences,
    Coverage from length."""
    text, criterion = v["response"], v["criterion"]
    if criterion == "organization":
        grade = 1 + min(4, max(0, len(_HEADING.findall(text)) - 1))
    elif criterion == "focus":
        title = keywords(v["instruction"].rsplit(":", 1)[-1])
        found = _plain(text)
        share = sum(1 for s in found if keywords(s) & title) / len(found) if found else 0.0
        grade = 1 + round(4 * share)
    else:
        grade = 1 + min(4, len(text.split()) // 150)
    return f"Stand-in grade for {criterion}, counted, not judged. [RESULT] {grade}"


def responders() -> dict[str, Any]:
    """Every WikiGenBench baseline prompt's template responder."""
    return {
        "wikigen/rr": write_article,
        "wikigen/outline": plan_outline,
        "wikigen/section": write_section,
        "wikigen/entails": entails,
        "wikigen/quality": rate_quality,
        "wikigen/outline_score": rate_outline,
        "wikigen/rubric": grade_rubric,
    }
