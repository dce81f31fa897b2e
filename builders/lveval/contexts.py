"""Mixup contexts at a length level: supporting passages at seeded depths among distractors.

A context is planned as :class:`Block` s (one per passage) of :class:`Segment` s, so evidence
spans and inserted confusing facts stay marked through keyword replacement; :func:`render` turns
a plan into LV-Eval's text (``### Passage N`` headers) and records where every evidence span and
confusing fact landed, by character offset and depth.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from builders.lveval.mentions import MentionIndex
from builders.lveval.records import Passage, Position, QAItem
from builders.lveval.shuffle import shuffled_positions
from builders.lveval.text import length, normal_form
from builders.text import sentence_starts

HEADER_WORDS = 3
"""``### Passage N`` counts as three words."""
MIN_PIECE = 10
"""A distractor is cut to fill the last gap only when at least this many words fit."""

_LEVEL = re.compile(r"^(\d+)([kK]?)$")


def level_words(label: str) -> int:
    """``16k`` -> 16,000 (LV-Eval's levels count thousands of words)."""
    number, thousands = _level(label)
    return number * (1000 if thousands else 1)


def level_tokens(label: str) -> int:
    """``16k`` -> 16,384 (a level in tokens counts thousands as 1,024, as context windows do)."""
    number, thousands = _level(label)
    return number * (1024 if thousands else 1)


def _level(label: str) -> tuple[int, bool]:
    """A level's number and whether it is in thousands (``k``)."""
    match = _LEVEL.match(label.strip())
    if not match:
        raise ValueError(f"length level {label!r} is not a size such as 16k or 2500")
    return int(match[1]), bool(match[2])


class AssemblyError(ValueError):
    """A context that cannot reach its level within the tolerance; the message says why."""


@dataclass(frozen=True)
class Segment:
    """A piece of a passage: plain text, an evidence span, or an inserted confusing fact."""

    text: str
    kind: Literal["text", "evidence", "fact"] = "text"


@dataclass(frozen=True)
class Block:
    """One passage of a context, as segments."""

    passage_id: str
    segments: tuple[Segment, ...]
    supporting: bool = False


@dataclass(frozen=True)
class Rendered:
    """A rendered context and the positions of its marked segments."""

    context: str
    passage_ids: list[str]
    evidence: list[Position]
    facts: list[Position]


class Corpus:
    """The distractor pool: passages with their lengths and normalised text, built once, and
    an index of which passages mention what (so an item's distractors cost what it excludes,
    not the whole pool)."""

    def __init__(self, passages: Sequence[Passage]):
        self.passages = list(passages)
        self.index = {p.passage_id: i for i, p in enumerate(self.passages)}
        self.words = [length(p.text, p.language) for p in self.passages]
        self._total_words = sum(self.words)
        self._mentions = MentionIndex([normal_form(p.text, p.language) for p in self.passages])
        self._positions: dict[str, list[int]] = {}
        for i, p in enumerate(self.passages):
            self._positions.setdefault(p.passage_id, []).append(i)

    def __len__(self) -> int:
        return len(self.passages)

    def get(self, passage_id: str) -> Passage:
        """The passage with ``passage_id``."""
        return self.passages[self.index[passage_id]]

    def excluded(self, item: QAItem) -> set[int]:
        """Passages that may not surround ``item``: its supporting passages and every passage
        that mentions one of its answers (after normalisation, :func:`normal_form`)."""
        out = {i for pid in set(item.supporting_ids) for i in self._positions.get(pid, ())}
        for answer in item.answers:
            needle = normal_form(answer, item.language)
            if needle.strip():
                out.update(self._mentions.containing(needle))
        return out

    def distractors(self, item: QAItem) -> list[int]:
        """Passages that may surround ``item``: not supporting it and mentioning no answer."""
        excluded = self.excluded(item)
        return [i for i in range(len(self.passages)) if i not in excluded]

    def distractor_words(self, item: QAItem) -> int:
        """The words of ``item``'s distractors, each with its ``### Passage N`` header."""
        excluded = self.excluded(item)
        kept = len(self.passages) - len(excluded)
        return self._total_words - sum(self.words[i] for i in excluded) + kept * HEADER_WORDS

    def shuffled(self, item: QAItem, rng: random.Random) -> Iterator[int]:
        """``item``'s distractors in the order ``rng.shuffle`` leaves them, with ``rng``
        advanced as that call advances it (:func:`shuffled_positions`), computed as they are
        read."""
        keep = np.ones(len(self.passages), dtype=bool)
        keep[sorted(self.excluded(item))] = False
        candidates = np.flatnonzero(keep)
        return (int(candidates[k]) for k in shuffled_positions(len(candidates), rng))


def word_ends(text: str, language: str) -> Iterator[int]:
    """Where each word (character for Chinese) of ``text`` ends."""
    pattern = r"\S" if language == "zh" else r"\S+"
    return (match.end() for match in re.finditer(pattern, text))


def _prefix(text: str, n: int, language: str) -> str:
    """The first ``n`` words (characters for Chinese) of ``text``, verbatim."""
    end = 0
    for k, at in enumerate(word_ends(text, language)):
        if k == n:
            break
        end = at
    return text[:end]


def _cut(text: str, n: int, language: str, floor: int) -> str:
    """``text`` cut to at most ``n`` words: at a sentence end if that keeps ``floor`` words."""
    best = ""
    for start in sentence_starts(text)[1:]:
        piece = text[:start].rstrip()
        if length(piece, language) > n:
            break
        best = piece
    if best and length(best, language) >= floor:
        return best
    return _prefix(text, n, language)


def support_block(passage: Passage, item: QAItem) -> Block:
    spans = sorted((e.start, e.end) for e in item.evidence if e.passage_id == passage.passage_id)
    segments: list[Segment] = []
    at = 0
    for start, end in spans:
        start = max(start, at)
        if start > at:
            segments.append(Segment(passage.text[at:start]))
        if end > start:
            segments.append(Segment(passage.text[start:end], "evidence"))
        at = max(at, end)
    if at < len(passage.text):
        segments.append(Segment(passage.text[at:]))
    return Block(passage.passage_id, tuple(segments), supporting=True)


def assemble(
    item: QAItem,
    corpus: Corpus,
    words: int,
    rng: random.Random,
    *,
    tolerance: float,
    reserve: int = 0,
) -> list[Block]:
    """Plan ``item``'s context at ``words``: its supporting passages at seeded depths among
    shuffled distractors, the last one cut to fit, so that the record's length (question,
    context and answers, plus ``reserve`` words for confusing facts) lands in
    ``[words * (1 - tolerance), words]``; :class:`AssemblyError` when it cannot."""
    language = item.language
    floor = int(words * (1 - tolerance))
    total = reserve + length(item.question, language)
    total += sum(length(a, language) for a in item.answers)
    support = [corpus.get(pid) for pid in item.supporting_ids]
    total += sum(length(p.text, language) + HEADER_WORDS for p in support)
    if total > words:
        raise AssemblyError(f"the supporting passages alone have {total} words, over {words}")
    chosen: list[Block] = []
    for i in corpus.shuffled(item, rng):
        room = words - total - HEADER_WORDS
        if room < MIN_PIECE:
            break
        passage = corpus.passages[i]
        text = passage.text
        if corpus.words[i] > room:
            text = _cut(text, room, language, floor - total - HEADER_WORDS)
        total += length(text, language) + HEADER_WORDS
        chosen.append(Block(passage.passage_id, (Segment(text),)))
    if total < floor:
        raise AssemblyError(
            f"the corpus fills {total} of {words} words (tolerance {tolerance:.0%}); "
            "add documents or lower the level"
        )
    depths = [rng.random() for _ in support]
    return place_support(chosen, [support_block(p, item) for p in support], depths)


def place_support(
    distractors: Sequence[Block], support: Sequence[Block], depths: Sequence[float]
) -> list[Block]:
    """``support[k]`` inserted among ``distractors`` at the fraction ``depths[k]`` of them
    (rounded to a passage boundary; ties keep the support's order)."""
    out = list(distractors)
    slots = sorted((round(depth * len(distractors)), k) for k, depth in enumerate(depths))
    for shift, (slot, k) in enumerate(slots):
        out.insert(slot + shift, support[k])
    return out


def insert_facts(
    blocks: Sequence[Block], facts: Sequence[str], rng: random.Random, copies: int = 1
) -> list[Block]:
    """Insert every fact ``copies`` times between two sentences of a random distractor (or,
    with none, of the supporting passages' plain text)."""
    out = list(blocks)
    for fact in facts:
        for _ in range(copies):
            spots = [
                (b, s)
                for b, block in enumerate(out)
                for s, seg in enumerate(block.segments)
                if seg.kind == "text" and seg.text.strip() and not block.supporting
            ] or [
                (b, s)
                for b, block in enumerate(out)
                for s, seg in enumerate(block.segments)
                if seg.kind == "text" and seg.text.strip()
            ]
            if not spots:
                raise AssemblyError("no plain text to hold a confusing fact")
            b, s = rng.choice(spots)
            segments = list(out[b].segments)
            text = segments[s].text
            at = rng.choice(sentence_starts(text))
            pieces = [Segment(text[:at]), Segment(fact, "fact"), Segment(" " + text[at:].lstrip())]
            if at and not text[:at].endswith((" ", "\n")):
                pieces[0] = Segment(text[:at] + " ")
            segments[s : s + 1] = [p for p in pieces if p.text]
            out[b] = replace(out[b], segments=tuple(segments))
    return out


def render(blocks: Sequence[Block], rewrite: Callable[[str], str] | None = None) -> Rendered:
    """LV-Eval's context text (``### Passage N`` then the passage, blank lines between), with
    ``rewrite`` (keyword replacement) applied to every segment."""
    parts: list[str] = []
    at = 0
    evidence: list[tuple[str, int, int, int, str]] = []
    facts: list[tuple[str, int, int, int, str]] = []
    for n, block in enumerate(blocks, 1):
        head = f"{'' if n == 1 else chr(10) * 2}### Passage {n}\n"
        parts.append(head)
        at += len(head)
        for segment in block.segments:
            text = rewrite(segment.text) if rewrite else segment.text
            if segment.kind != "text":
                target = evidence if segment.kind == "evidence" else facts
                target.append((block.passage_id, n, at, at + len(text), text))
            parts.append(text)
            at += len(text)
    context = "".join(parts)
    size = max(len(context), 1)

    def positions(marks: list[tuple[str, int, int, int, str]]) -> list[Position]:
        return [Position(p, n, s, e, round(s / size, 4), t) for p, n, s, e, t in marks]

    return Rendered(context, [b.passage_id for b in blocks], positions(evidence), positions(facts))
