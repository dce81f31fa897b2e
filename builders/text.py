"""Text helpers shared by every benchmark family: keywords and specific tokens, and (from the
scorers that ship with every export) the sentence splitter (:mod:`benchsmith_scoring.sentences`)
and the SQuAD-style answer normalisation and token F1 that LV-Eval's and L-Eval's metrics use
(:mod:`benchsmith_scoring.text`).

No family module imports another family's helpers; they all import these.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any, Literal

from benchsmith_scoring.sentences import ABBREVIATIONS as ABBREVIATIONS
from benchsmith_scoring.sentences import sentence_lines as sentence_lines
from benchsmith_scoring.sentences import sentence_starts as sentence_starts
from benchsmith_scoring.sentences import sentences as sentences
from benchsmith_scoring.text import ZH_PUNCTUATION as ZH_PUNCTUATION
from benchsmith_scoring.text import check_language as check_language
from benchsmith_scoring.text import normalize_en as normalize_en
from benchsmith_scoring.text import text_length as text_length
from benchsmith_scoring.text import token_f1 as token_f1
from benchsmith_scoring.text import tokens as tokens

_STOPWORDS = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves say says said tell told report
    reports reported document documents discuss discussed"""
STOPWORDS = frozenset(_STOPWORDS.split())
"""English function words plus question verbs, ignored by the keyword retriever (SummHay's KWs
used NLTK's list; this one is close to it and needs no download)."""
_WORD = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"\d[\d,.]*\d|\d")
_NAME = re.compile(r"\b[A-Z][a-z]+\b")


def keywords(text: str) -> set[str]:
    """Lower-cased content words of ``text``."""
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1}


def specific_tokens(text: str) -> set[str]:
    """Numbers (without separators) and capitalised words after the first word."""
    numbers = {n.replace(",", "").rstrip(".") for n in _NUMBER.findall(text)}
    words = text.split()
    names = set(_NAME.findall(" ".join(words[1:]))) | (
        {words[0]} if words and _NAME.fullmatch(words[0]) else set()
    )
    return numbers | names


CHARACTER_LANGUAGES = frozenset({"zh", "ja"})
"""Languages written without spaces between words, measured in characters (as LV-Eval does)."""


def length_unit(language: str) -> Literal["words", "characters"]:
    """How text in ``language`` (a code such as ``zh-Hant`` or ``en``) is measured."""
    return "characters" if language.split("-")[0].lower() in CHARACTER_LANGUAGES else "words"


def json_object(
    line: str, where: str, keys: Collection[str], broken: str = "not valid JSON"
) -> dict[str, Any]:
    """One JSONL line as an object with only ``keys``; a ``ValueError`` starting with
    ``where`` (the file and line) when it is not JSON (``broken`` says so), not an object, or
    has another key."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: {broken} ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object with {', '.join(keys)}")
    if unknown := sorted(set(data) - set(keys)):
        raise ValueError(f"{where}: unknown key {unknown[0]!r}")
    return data
