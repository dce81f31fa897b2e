"""Text measures shared by every LV-Eval step: length as LV-Eval counts it, sentences, and
whether an answer appears in a text after normalisation."""

from __future__ import annotations

from builders.text import text_length, tokens


def length(text: str, language: str = "en") -> int:
    """LV-Eval's length: words for English, characters (without whitespace) for Chinese."""
    return text_length(text, "characters" if language == "zh" else "words")


def normal_form(text: str, language: str = "en") -> str:
    """Normalised tokens joined so that whole-word containment is a substring test."""
    parts = tokens(text, language)
    return "".join(parts) if language == "zh" else f" {' '.join(parts)} "


def mentions(text: str, phrase: str, language: str = "en") -> bool:
    """Whether ``phrase`` appears in ``text`` as whole words, after lower-casing and dropping
    punctuation and articles (LV-Eval's normalisation)."""
    needle = normal_form(phrase, language)
    return bool(needle.strip()) and needle in normal_form(text, language)
