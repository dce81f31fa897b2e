"""The one sentence splitter of every benchsmith family, shipped so that a harness splits a
generated article into the same sentences the toolkit scored (WikiGenBench's citation scores are
per sentence).

It needs NLTK's Punkt (imported on first use; rouge-score, which the shipped ROUGE needs, brings
NLTK with it). :mod:`builders.text` re-exports these functions for the toolkit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nltk.tokenize.punkt import PunktSentenceTokenizer

_ABBREVIATIONS = """
    mr mrs ms dr prof st mt ft gen col lt sgt capt cmdr gov sen rep rev hon jr sr vs approx fig al
    e.g i.e cf u.s u.k u.n e.u jan feb apr jun jul aug sept oct nov dec"""
ABBREVIATIONS = frozenset(_ABBREVIATIONS.split())
"""Words whose full stop does not end a sentence (Punkt's ``abbrev_types``), lower-case and
without the final stop. Kept short: an entry like ``inc`` or ``no`` ends sentences as often as
it abbreviates."""
_HARD_BREAK = re.compile(r"[ \t]*\n\s*|(?<=[。！？])[”’」』）]*")
_LEADING_CITATION = re.compile(r"(?:\s*\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\])+")


@lru_cache(maxsize=1)
def _punkt() -> PunktSentenceTokenizer:
    # imported here: nltk's package import (all of nltk, scipy.stats among it) takes about a
    # second, which every `benchsmith` command would pay through the settings it loads
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    return PunktSentenceTokenizer(params)


def _joined(offset: int, line: str) -> list[tuple[int, int]]:
    """Punkt's sentences of one line, rejoined where the next one starts in lower case ("3 p.m.
    on Friday", "e.g. the"): edited prose starts a sentence with a capital, digit or quote."""
    out: list[tuple[int, int]] = []
    for start, end in _punkt().span_tokenize(line):
        if out and line[start].islower():
            out[-1] = (out[-1][0], offset + end)
        else:
            out.append((offset + start, offset + end))
    return out


def sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every sentence of ``text``, without surrounding whitespace.

    The one sentence splitter of every family. A line break, or a Chinese full stop, always
    ends a sentence (headlines and list items carry no stop); inside a line NLTK's Punkt
    splits, told the :data:`ABBREVIATIONS` so "Dr. Fahr" stays whole, and never before a
    lower-case letter. Citation marks
    (``[1]``, ``[2, 3]``) after a sentence's stop belong to that sentence.
    """
    spans = [span for start, line in _lines(text) for span in _joined(start, line)]
    out: list[tuple[int, int]] = []
    for begin, end in spans:
        cite = _LEADING_CITATION.match(text, begin)
        if out and cite and text[out[-1][1] - 1] in ".!?\"')]":
            out[-1] = (out[-1][0], cite.end())
            begin = cite.end()
        piece = text[begin:end]
        begin += len(piece) - len(piece.lstrip())
        end -= len(piece) - len(piece.rstrip())
        if end > begin:
            out.append((begin, end))
    return out


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """``(offset, line)`` of every piece of ``text`` between hard breaks that is not blank."""
    start = 0
    for brk in [*_HARD_BREAK.finditer(text), None]:
        line = text[start : brk.start() if brk else len(text)]
        if line.strip():
            yield start, line
        if brk:
            start = brk.end()


def sentence_lines(text: str) -> list[str] | None:
    """The pieces of ``text`` between hard breaks (line breaks, Chinese full stops), which
    :func:`sentences` splits one by one: the sentences of ``text`` are theirs, in order. None
    when a piece after the first opens with a citation mark, which :func:`sentences` moves onto
    the sentence before it, across the break."""
    out: list[str] = []
    for _, line in _lines(text):
        if out and _LEADING_CITATION.match(line):
            return None
        out.append(line)
    return out


def sentence_starts(text: str) -> list[int]:
    """Offsets where sentences begin, 0 first: the places a sentence can be put between two."""
    return [0, *(start for start, _ in sentences(text)[1:])]
