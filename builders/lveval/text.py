"""Text measures shared by every LV-Eval step: length as LV-Eval counts it, sentences, and
whether an answer appears in a text after normalisation."""

from __future__ import annotations

import re

from builders.lveval.metrics import text_length, tokens

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[。！？])")


def length(text: str, language: str = "en") -> int:
    """LV-Eval's length: words for English, characters (without whitespace) for Chinese."""
    return text_length(text, "characters" if language == "zh" else "words")


def sentence_starts(text: str) -> list[int]:
    """Offsets where sentences begin (0 first), after sentence-final punctuation and spaces."""
    return [0, *(m.end() for m in _SENTENCE_END.finditer(text) if m.end() < len(text))]


def sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every sentence, end excluding trailing whitespace."""
    starts = sentence_starts(text)
    bounds = []
    for start, nxt in zip(starts, [*starts[1:], len(text)], strict=True):
        end = start + len(text[start:nxt].rstrip())
        if end > start:
            bounds.append((start, end))
    return bounds


def normal_form(text: str, language: str = "en") -> str:
    """Normalised tokens joined so that whole-word containment is a substring test."""
    parts = tokens(text, language)
    return "".join(parts) if language == "zh" else f" {' '.join(parts)} "


def mentions(text: str, phrase: str, language: str = "en") -> bool:
    """Whether ``phrase`` appears in ``text`` as whole words, after lower-casing and dropping
    punctuation and articles (LV-Eval's normalisation)."""
    needle = normal_form(phrase, language)
    return bool(needle.strip()) and needle in normal_form(text, language)
