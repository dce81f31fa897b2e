"""KPR: keyword and phrase replacement, proposed automatically and reviewable as JSONL.

Rules are :class:`~builders.lveval.records.Rule` records ``{orig, repl, scope}``. Proposed rules
replace the proper names of a question, its answers and its evidence with invented names (a
seeded syllable generator); a reviewed JSONL file may veto (``repl: null``), change or add rules.
Replacement matches whole words in any case and carries the case over (``Imre``/``IMRE``/
``imre`` -> ``Dalven``/``DALVEN``/``dalven``); all rules apply in one pass, so no replacement is
itself replaced. Checks: no replacement may already occur in the corpus or another rule's
original, no original may survive, and every answer must still appear in its replaced evidence.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from builders.lveval.records import QAItem, Rule
from builders.lveval.text import mentions
from builders.text import json_object

SYLLABLES = (
    "dal", "ven", "mor", "tis", "ka", "rel", "bra", "sun", "quo", "lin", "zer", "fa",
    "nor", "vey", "gal", "tho", "ber", "wyn", "os", "cal", "dri", "mek", "pol", "ith",
)  # fmt: skip
NOT_NAMES = frozenset((
    "the", "a", "an", "in", "on", "at", "of", "and", "or", "but", "for", "to", "by", "with",
    "from", "after", "before", "during", "when", "while", "this", "that", "these", "those",
    "it", "its", "his", "her", "their", "there", "he", "she", "they", "we", "i", "what",
    "which", "who", "whom", "whose", "how", "where", "why", "if", "as", "since", "until",
    "about", "over", "under", "between", "among", "january", "february", "march", "april",
    "may", "june", "july", "august", "september", "october", "november", "december", "monday",
    "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
))  # fmt: skip
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
_WORD = re.compile(r"[A-Za-z]+")


def vocabulary(texts: Iterable[str]) -> tuple[set[str], set[str]]:
    """Every word (lower-cased) of ``texts``, and the words that also occur in lower case."""
    words: set[str] = set()
    lower: set[str] = set()
    for text in texts:
        for word in _WORD.findall(text):
            words.add(word.lower())
            if word.islower():
                lower.add(word)
    return words, lower


def names(texts: Sequence[str], lower_words: set[str]) -> list[str]:
    """Proper names of ``texts`` in order of appearance: capitalised words that never occur in
    lower case in the corpus (so common nouns starting a sentence are left alone)."""
    found: dict[str, None] = {}
    for text in texts:
        for word in _CAPITALISED.findall(text):
            low = word.lower()
            if low not in NOT_NAMES and low not in lower_words:
                found.setdefault(word)
    return list(found)


def invent(orig: str, seed: int, taken: set[str]) -> str:
    """A pronounceable made-up name for ``orig``, seeded, absent from ``taken`` (lower-case)."""
    for attempt in range(1000):
        h = hashlib.sha1(f"{seed}:{orig}:{attempt}".encode()).digest()
        count = 2 + h[0] % 2
        name = "".join(SYLLABLES[b % len(SYLLABLES)] for b in h[1 : 1 + count]).capitalize()
        if name.lower() not in taken and name.lower() != orig.lower():
            return name
    raise ValueError(f"no free replacement name for {orig!r}")


def item_names(item: QAItem, lower_words: set[str]) -> list[str]:
    """The proper names of ``item``: its question's and answers' first, then its evidence's."""
    return names([item.question, *item.answers, *(e.text for e in item.evidence)], lower_words)


def propose(item: QAItem, found: Sequence[str], seed: int, max_rules: int) -> list[Rule]:
    """Rules replacing the first ``max_rules`` of ``found`` (the item's proper names) with
    invented names that occur nowhere in the item's own text; clashes with the rest of the
    corpus are left to :func:`problems`."""
    texts = [item.question, *item.answers, *(e.text for e in item.evidence)]
    taken = {w.lower() for text in texts for w in _WORD.findall(text)}
    rules = []
    for orig in found[:max_rules]:
        repl = invent(orig, seed, taken)
        taken.add(repl.lower())
        rules.append(Rule(orig, repl, item.qa_id))
    return rules


def resolve(proposed: Sequence[Rule], reviewed: Sequence[Rule], item: QAItem) -> list[Rule]:
    """The rules that apply to ``item``: reviewed rules in its scope override proposed ones with
    the same original (case-insensitive); ``repl: null`` drops a rule."""
    mine = [r for r in reviewed if r.applies_to(item)]
    # the narrowest scope wins: qa_id over dataset over "*"
    rank = {item.qa_id: 0, item.dataset: 1, "*": 2}
    chosen: dict[str, Rule] = {}
    for rule in sorted(mine, key=lambda r: rank[r.scope], reverse=True):
        chosen[rule.orig.lower()] = rule
    for rule in proposed:
        chosen.setdefault(rule.orig.lower(), rule)
    return [r for r in chosen.values() if r.repl]


def _case_like(repl: str, found: str) -> str:
    if len(found) > 1 and found.isupper():
        return repl.upper()
    if found.islower():
        return repl.lower()
    return repl


class Replacer:
    """Apply rules to text in one pass: whole words, any case, the found case carried over."""

    def __init__(self, rules: Sequence[Rule]):
        self.rules = [r for r in rules if r.repl]
        self._map = {r.orig.lower(): r.repl or "" for r in self.rules}
        alternatives = sorted(self._map, key=len, reverse=True)
        self._pattern = (
            re.compile(r"\b(?:" + "|".join(re.escape(o) for o in alternatives) + r")\b", re.I)
            if alternatives
            else None
        )

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda m: _case_like(self._map[m[0].lower()], m[0]), text)

    def survivors(self, text: str) -> list[str]:
        """Originals still present in ``text`` (after replacement there should be none)."""
        if self._pattern is None:
            return []
        return sorted({m[0] for m in self._pattern.finditer(text)})


def problems(
    item: QAItem, rules: Sequence[Rule], words: set[str], facts: Sequence[str] = ()
) -> str | None:
    """Why ``rules`` cannot be applied to ``item``, or None: a replacement already in the corpus
    (``words``) or equal to another original, an original surviving, an answer no longer in its
    replaced evidence."""
    origs = {r.orig.lower() for r in rules}
    for rule in rules:
        repl = (rule.repl or "").lower()
        kept = set(_WORD.findall(rule.orig.lower()))  # "Meridal River" -> "Talven River"
        clash = [w for w in _WORD.findall(repl) if w not in kept and (w in words or w in origs)]
        if clash or repl in origs:
            return f"replacement {rule.repl!r} for {rule.orig!r} collides with existing text"
    replace = Replacer(rules)
    texts = [item.question, *item.answers, item.answer_keywords, *facts]
    texts += [e.text for e in item.evidence]
    for text in texts:
        if left := replace.survivors(replace(text)):
            return f"original {left[0]!r} survives replacement"
    evidence = " ".join(replace(e.text) for e in item.evidence)
    for answer in item.answers:
        if not mentions(evidence, replace(answer), item.language):
            return f"answer {replace(answer)!r} is not in the replaced evidence"
    return None


def parse_rules(lines: Iterable[str], source: str) -> list[Rule]:
    """Reviewed rules from JSONL lines (``{"orig", "repl", "scope"}`` per line); errors name
    ``source`` (the file the lines came from), the line and the key."""
    rules = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        data = json_object(line, f"{source}:{n}", ("orig", "repl", "scope"))
        orig, repl, scope = data.get("orig"), data.get("repl"), data.get("scope", "*")
        if not isinstance(orig, str) or not orig.strip():
            raise ValueError(f"{source}:{n}: 'orig' must be a non-empty string")
        if repl is not None and (not isinstance(repl, str) or not repl.strip()):
            raise ValueError(f"{source}:{n}: 'repl' must be a non-empty string or null")
        if not isinstance(scope, str) or not scope:
            raise ValueError(f"{source}:{n}: 'scope' must be '*', a dataset name or a qa_id")
        rules.append(Rule(orig.strip(), repl.strip() if repl else None, scope, "reviewed"))
    return rules
