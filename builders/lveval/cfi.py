"""CFI: confusing facts that resemble the evidence but change its answer-bearing part.

:func:`perturb` is the rule-based generator: in the answer-bearing evidence sentence it swaps
the answer for another value of the same type (a date's month, a number scaled by a seeded
factor, or a proper name from the corpus's pool of names of the same length). :func:`check`
rejects any fact (rule-based or model-written) that states a true answer, repeats the evidence,
denies the question's premise, or no longer resembles the evidence.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import islice

from builders.lveval.records import QAItem
from builders.lveval.text import mentions, normal_form
from builders.text import sentences, tokens

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
NEGATIONS = frozenset((
    "not", "no", "never", "none", "neither", "nor", "nobody", "nothing", "nowhere", "without",
    "cannot", "false", "untrue", "denied", "didnt", "wasnt", "werent", "isnt", "arent", "hasnt",
    "havent", "hadnt", "wont", "dont", "doesnt",
))  # fmt: skip
MIN_RESEMBLANCE = 0.3
"""Share of the evidence sentence's words a confusing fact must keep."""
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_NAME = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+){0,3}\b")


def name_pool(texts: Iterable[str], limit: int = 20000) -> list[str]:
    """Proper-name phrases of ``texts`` (1 to 4 capitalised words), most frequent first."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(m[0] for m in _NAME.finditer(text) if m[0].split()[0] not in MONTHS)
    return [name for name, _ in counts.most_common(limit)]


def _scale(number: str, rng: random.Random) -> str:
    digits = number.replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    value = float(digits)
    for _ in range(20):
        new = value * rng.choice((0.5, 0.6, 0.7, 0.8, 1.25, 1.4, 1.6, 2.0, 3.0))
        new = round(new, decimals) if decimals else round(new)
        if new != value and new > 0:
            break
    else:
        new = value + 1
    text = f"{new:,.{decimals}f}" if "," in number else f"{new:.{decimals}f}"
    return text


def alternative(value: str, rng: random.Random, names: Sequence[str]) -> str | None:
    """Another value of the same type as ``value``: a date with another month, numbers scaled,
    or another name of as many words; None when ``value`` is none of these."""
    months = [m for m in MONTHS if re.search(rf"\b{m}\b", value)]
    if months:
        other = rng.choice([m for m in MONTHS if m not in months])
        return re.sub(rf"\b{months[0]}\b", other, value)
    if _NUMBER.search(value):
        return _NUMBER.sub(lambda m: _scale(m[0], rng), value)
    options = name_options(value, names)
    return rng.choice(options) if options else None


def name_options(value: str, names: Sequence[str], limit: int = 200) -> list[str]:
    """Up to ``limit`` names of ``names`` that could stand in for the name ``value``: as many
    words, none shared (empty when ``value`` is not a name)."""
    if not _NAME.fullmatch(value.strip()):
        return []
    words = set(value.lower().split())
    size = len(value.split())
    options = (n for n in names if len(n.split()) == size and not words & set(n.lower().split()))
    return list(islice(options, limit))  # the pool's most frequent names first, read as needed


def swap_names(item: QAItem, names: Sequence[str], limit: int = 20) -> list[str]:
    """The names a confusing fact for ``item`` may swap in for its answer, from the pool's
    ``names``: shown in the ask, so the answer depends on nothing outside it."""
    found = answer_sentence(item)
    return name_options(found[1], names, limit) if found else []


def answer_sentence(item: QAItem) -> tuple[str, str] | None:
    """The evidence sentence that holds an answer verbatim, and that answer."""
    for evidence in item.evidence:
        for start, end in sentences(evidence.text) or [(0, len(evidence.text))]:
            sentence = evidence.text[start:end]
            for answer in item.answers:
                if re.search(rf"(?<!\w){re.escape(answer)}(?!\w)", sentence, re.I):
                    return sentence, answer
    return None


def perturb(item: QAItem, rng: random.Random, names: Sequence[str]) -> str | None:
    """A rule-based confusing fact for ``item``, or None when no answer can be swapped."""
    found = answer_sentence(item)
    if found is None:
        return None
    sentence, answer = found
    new = alternative(answer, rng, names)
    if new is None:
        return None
    pattern = re.compile(rf"(?<!\w){re.escape(answer)}(?!\w)", re.I)
    return pattern.sub(lambda _: new, sentence)


def check(fact: str, item: QAItem) -> str | None:
    """Why ``fact`` is not a usable confusing fact for ``item``, or None."""
    if not fact.strip():
        return "the confusing fact is empty"
    for answer in item.answers:
        if mentions(fact, answer, item.language):
            return f"the confusing fact states the true answer {answer!r}"
    evidence = " ".join(e.text for e in item.evidence)
    if any(normal_form(fact) == normal_form(e.text) for e in item.evidence):
        return "the confusing fact repeats the evidence"
    known = set(tokens(evidence + " " + item.question, item.language))
    denial = [w for w in tokens(fact, item.language) if w in NEGATIONS and w not in known]
    if denial:
        return f"the confusing fact denies the question's premise ({denial[0]!r})"
    fact_words = set(tokens(fact, item.language))
    sentence = answer_sentence(item)
    reference = set(tokens(sentence[0] if sentence else evidence, item.language))
    if reference and len(fact_words & reference) / len(reference) < MIN_RESEMBLANCE:
        return "the confusing fact does not resemble the evidence"
    return None
