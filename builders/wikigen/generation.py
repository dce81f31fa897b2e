"""Generated Wikipedia articles, taken apart and scored as WikiGenBench does.

An article is written in sections headed ``==Name==``; every sentence cites the documents it
rests on as ``[k]`` (or ``[1][2]``, ``[1, 2]``), numbered as they were shown to the writer.
Verifiability (WikiGenBench, after ALCE), with ``phi(c, s) = 1`` when document ``c`` entails
sentence ``s``, over the ``M`` sentences of an article:

- citation recall: the share of sentences with at least one entailing citation;
- citation precision: the mean over sentences of entailing citations / citations (a sentence
  without citations counts 0, so that both share the denominator ``M``);
- citation rate: citation recall weighted by each sentence's words.

A citation number outside the documents shown is kept and counts as not entailing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from builders.text import sentences

_CITE = r"\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]"
_CITATION = re.compile(_CITE)
_NUMBER = re.compile(r"\d+")
_HEADING = re.compile(r"^[ \t]*={2,}\s*([^=\n]+?)\s*={2,}[ \t]*$|={2,}([^=\n]{1,120}?)={2,}", re.M)
_OUTLINE_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•]|={2,})\s*(.+?)\s*=*\s*$")


@dataclass(frozen=True)
class Claim:
    """One sentence of a generated article and the documents it cites.

    ``cited`` holds, per citation, the cited document's id, or ``""`` when its number names no
    document that was shown.
    """

    section: str
    text: str
    cited: tuple[str, ...]

    @property
    def words(self) -> int:
        return len(self.text.split())


def sections(article: str) -> list[tuple[str, str]]:
    """``(heading, body)`` pairs in order; text before the first heading has heading ``""``."""
    out: list[tuple[str, str]] = []
    heading, start = "", 0
    for match in _HEADING.finditer(article):
        out.append((heading, article[start : match.start()]))
        heading, start = (match[1] or match[2]).strip(), match.end()
    out.append((heading, article[start:]))
    return [(h, b.strip()) for h, b in out if b.strip() or h]


def has_sentences(article: str) -> bool:
    """Whether any section of ``article`` holds a sentence (a bare heading does not)."""
    return any(sentences(body) for _, body in sections(article))


def reference_article(summary: str, section_texts: Iterable[str]) -> str:
    """The reference text a generated article is scored against (ROUGE-L): the lead, then
    every section's text, paragraphs apart."""
    return "\n\n".join([summary, *section_texts]).strip()


def claims(body: str, section: str, documents: Sequence[str]) -> list[Claim]:
    """The sentences of ``body`` with their citations resolved against ``documents`` (the ids
    of the documents shown, document ``k`` at index ``k - 1``)."""
    out = []
    for start, end in sentences(body):
        sentence = body[start:end]
        numbers = [int(n) for c in _CITATION.findall(sentence) for n in _NUMBER.findall(c)]
        text = " ".join(_CITATION.sub(" ", sentence).split())
        if not text.strip(" .!?\"'()"):
            continue
        cited = tuple(documents[n - 1] if 0 < n <= len(documents) else "" for n in numbers)
        out.append(Claim(section, text, tuple(dict.fromkeys(cited))))
    return out


def article_claims(article: str, documents: Sequence[str]) -> list[Claim]:
    """Every sentence of an article written over one list of documents (RR)."""
    return [c for heading, body in sections(article) for c in claims(body, heading, documents)]


def outline(text: str, limit: int) -> list[str]:
    """Section headings of a planned outline (numbered, bulleted or ``==Name==`` lines), at most
    ``limit``, duplicates dropped."""
    found = []
    for line in text.splitlines():
        match = _OUTLINE_ITEM.match(line)
        if match:
            name = match[1].strip(" :.*=")
            if name and len(name) <= 120:
                found.append(name)
    return list(dict.fromkeys(found))[:limit]


@dataclass(frozen=True)
class CitationScores:
    """WikiGenBench's verifiability of one article, as fractions."""

    sentences: int
    cited_sentences: int
    recall: float
    precision: float
    rate: float


def citation_scores(found: Sequence[Claim], supported: Sequence[Sequence[bool]]) -> CitationScores:
    """Scores of ``found`` given, per claim and citation, whether the cited document entails it
    (an unknown citation, ``""``, never does)."""
    if not found:
        return CitationScores(0, 0, 0.0, 0.0, 0.0)
    recall = [float(any(s)) for s in supported]
    precision = [sum(s) / len(s) if s else 0.0 for s in supported]
    words = sum(c.words for c in found)
    return CitationScores(
        sentences=len(found),
        cited_sentences=sum(1 for c in found if c.cited),
        recall=sum(recall) / len(found),
        precision=sum(precision) / len(found),
        rate=sum(c.words * r for c, r in zip(found, recall, strict=True)) / max(words, 1),
    )
