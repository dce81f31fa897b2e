"""Offline answers for SummHay's evaluation prompts: an extractive summarizer and a lexical judge.

The summarizer is a real (weak) baseline: it picks the context sentences that share most
keywords with the query, one bullet per distinct sentence, citing every context document that
contains the sentence by its number, in the form SummHay's parser reads (``[3][14]``). The judge
compares an insight's specific tokens (numbers and capitalised names) with each bullet: all
present is full coverage, some is partial.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from builders.text import keywords, sentences, specific_tokens

_SPEAKER = re.compile(r"^[A-Z][a-z]+: ")
_NUMBERS = re.compile(r"\s*\[[\d, ]+\]")
"""Bracketed numbers already in a sentence (web references): they would read as citations."""


def summarize(v: Mapping[str, Any]) -> str:
    """Up to ``bullets`` bullets of the context sentences closest to the query, with citations."""
    wanted = keywords(v["query"])
    found: dict[str, list[int]] = {}
    score: dict[str, int] = {}
    for doc in v["documents"]:
        for start, end in sentences(doc["text"]):
            raw = _NUMBERS.sub("", _SPEAKER.sub("", doc["text"][start:end]))
            sentence = " ".join(raw.split())  # one line: a line is a bullet
            if len(sentence.split()) < 5:
                continue
            overlap = len(wanted & keywords(sentence))
            if overlap:
                found.setdefault(sentence, []).append(doc["number"])
                score[sentence] = overlap
    best = sorted(found, key=lambda s: (-score[s], -len(found[s]), s))[: v["bullets"]]
    return "\n".join(f"- {s} {_cite(found[s])}" for s in best)


def _cite(numbers: list[int]) -> str:
    """``[3][14]``: each document number in its own brackets."""
    return "".join(f"[{n}]" for n in dict.fromkeys(numbers))


def judge(v: Mapping[str, Any]) -> str:
    """Full when a bullet holds every specific token of the insight, partial when some."""
    wanted = specific_tokens(v["insight"])
    best, best_hits = None, 0
    for bullet in v["bullets"]:
        hits = len(wanted & specific_tokens(bullet["text"]))
        if hits > best_hits:
            best, best_hits = bullet["bullet_id"], hits
    if best is None or not wanted:
        return json.dumps({"coverage": "none", "bullet_id": "NA"})
    coverage = "full" if best_hits == len(wanted) else "partial"
    return json.dumps({"coverage": coverage, "bullet_id": best})


def responders() -> dict[str, Any]:
    """Template responders of the evaluation prompts."""
    return {"summhay/summarize": summarize, "summhay/judge": judge}
