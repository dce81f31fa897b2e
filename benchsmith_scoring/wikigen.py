"""Generated Wikipedia articles, taken apart and scored as WikiGenBench does.

An article is written in sections headed ``==Name==``; every sentence cites the documents it
rests on as ``[k]`` (or ``[1][2]``, ``[1, 2]``), numbered as they were shown to the writer.
Verifiability (WikiGenBench, after ALCE), with ``phi(c, s) = 1`` when document ``c`` entails
sentence ``s``, over the ``M`` sentences of an article:

- citation recall: the share of sentences with at least one entailing citation;
- citation precision: the mean over sentences of entailing citations / citations (a sentence
  without citations counts 0, so that both share the denominator ``M``);
- citation rate: citation recall weighted by each sentence's words.

A citation number outside the documents shown is kept and counts as not entailing. Whether a
document entails a sentence is asked with the ``wikigen/entails`` prompt and read by
:func:`read_entails`. The toolkit's ``wikigen_baselines`` stage and the shipped Inspect task
``wikigenbench_rr`` both score with this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .replies import NoJSONError, find_json
from .sentences import sentences

ENTAILS_PROMPT = "wikigen/entails"
ENTAILS_SCHEMA = {
    "type": "object",
    "properties": {"entails": {"type": "boolean"}},
    "required": ["entails"],
    "additionalProperties": False,
}
"""The entailment judge's answer, asked as structured output where the judge's server can."""
_CITE = r"\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]"
_CITATION = re.compile(_CITE)
_NUMBER = re.compile(r"\d+")
_HEADING = re.compile(r"^[ \t]*={2,}\s*([^=\n]+?)\s*={2,}[ \t]*$|={2,}([^=\n]{1,120}?)={2,}", re.M)


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


class EntailsError(ValueError):
    """An entailment reply with no usable verdict; the message says why."""


def entails_variables(premise: str, claim: str) -> dict[str, str]:
    """The ``wikigen/entails`` prompt's variables: the cited document and the sentence."""
    return {"premise": premise, "claim": claim}


_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
_MISMATCH = "the JSON does not match the format: entails: "
_INT64 = range(-(2**63), 2**63)


def read_entails(reply: str) -> bool:
    """The verdict of an entailment reply: ``entails`` of its first JSON object (a bare array
    stands for that value), read as pydantic's lax mode reads a ``bool``: JSON true or false,
    0 or 1, or one of the words ``true false yes no on off t f y n 1 0`` in any case.
    :class:`EntailsError` otherwise, worded as the toolkit's re-ask words it. A citation whose
    reply fails is not supported (the toolkit re-asks first)."""
    try:
        value: Any = find_json(reply)
    except NoJSONError as exc:
        raise EntailsError(str(exc)) from None
    if isinstance(value, dict) and "entails" not in value:
        raise EntailsError(_MISMATCH + "Field required")
    found = value["entails"] if isinstance(value, dict) else value
    if isinstance(found, bool):
        return found
    if isinstance(found, int | float) and found in (0, 1):
        return bool(found)
    if isinstance(found, str) and found.lower() in _TRUE | _FALSE:
        return found.lower() in _TRUE
    readable = isinstance(found, str) or (isinstance(found, int) and found in _INT64)
    readable = readable or (isinstance(found, float) and found.is_integer())
    detail = ", unable to interpret input" if readable else ""
    raise EntailsError(_MISMATCH + "Input should be a valid boolean" + detail)
