"""Token-exact levels (``length_unit: tokens``): a context sized so that what the shipped harness
sends fits the level in the evaluated model's tokens.

What is counted is a harness request: the shipped ``lveval/answer`` prompt rendered with the
context and question (:func:`benchsmith_scoring.harness.lveval_prompt`), framed as the
tokenizer's chat, plus the first answer (:meth:`Tokenizer.count_request`). A level such as
``128k`` is 128 x 1,024 tokens; every variant's request lands in
``[level x (1 - tolerance), level]``.

The context is planned as word mode plans it (the same supporting passages, seeded distractor
order and supporting depths) and sized as RULER sizes its haystacks: a binary search over whole
distractor passages, then the next passage cut at a sentence end (a word end when no sentence
end comes close enough), by a binary search over its sentence starts. Per-passage counts make
the search cheap (each passage is counted once across levels and variants) but only estimate
the whole (tokens at a passage's edges, its header, inserted facts and replaced names), so every
variant's request is then counted exactly and the plan steps back by the excess when one is
over (or forward by the room left when one falls below the floor).
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchsmith_scoring.harness import lveval_prompt
from benchsmith_scoring.tokens import Tokenizer
from builders.lveval.contexts import (
    MIN_PIECE,
    AssemblyError,
    Block,
    Corpus,
    Segment,
    place_support,
    support_block,
    word_ends,
)
from builders.lveval.records import Passage, QAItem
from builders.text import sentence_starts

HEADER = "\n\n### Passage 10\n"
"""A passage header as the estimate counts it (the exact count comes from the rendered text)."""
MAX_STEPS = 8
"""Exact counts taken per context at most before the level is given up as unreachable."""

Measure = Callable[[list[Block]], tuple[int, int]]
"""The fewest and most request tokens among a plan's variants, counted exactly."""


@dataclass
class TokenCounts:
    """Request and passage counts in one tokenizer; a passage is counted once per text."""

    tokenizer: Tokenizer
    _texts: dict[str, int] = field(default_factory=dict, repr=False)
    _totals: dict[int, tuple[Corpus, int]] = field(default_factory=dict, repr=False)
    """Each pool's estimated tokens, by the pool's id (the pool kept, so its id stays its)."""

    def request(self, question: str, context: str, answer: str | None) -> int:
        """Tokens of the harness request for ``question`` over ``context`` with ``answer``."""
        prompt = lveval_prompt({"context": context, "question": question})
        return self.tokenizer.count_request(prompt, answer)

    def text(self, text: str) -> int:
        """Tokens of ``text`` alone (remembered)."""
        if (n := self._texts.get(text)) is None:
            n = self._texts[text] = self.tokenizer.count(text)
        return n

    def block(self, text: str) -> int:
        """The estimated tokens of a passage in a context: its text and its header."""
        return self.text(text) + self.text(HEADER)

    def fits(self, item: QAItem, corpus: Corpus, tokens: int, tolerance: float) -> bool:
        """Whether the corpus holds enough distractors to fill ``item``'s level of ``tokens``
        (the pool's total counted once, less what the item excludes)."""
        if id(corpus) not in self._totals:
            self._totals[id(corpus)] = (corpus, sum(self.block(p.text) for p in corpus.passages))
        have = self._totals[id(corpus)][1]
        have -= sum(self.block(corpus.passages[i].text) for i in corpus.excluded(item))
        have += sum(self.block(corpus.get(p).text) for p in item.supporting_ids)
        return have >= tokens * (1 - tolerance)


class Plan:
    """One item's context at one level: word mode's draws, sized in tokens for a given room."""

    def __init__(
        self, item: QAItem, corpus: Corpus, rng: random.Random, counts: TokenCounts, reserve: int
    ):
        self.item, self.corpus, self.counts = item, corpus, counts
        support = [corpus.get(pid) for pid in item.supporting_ids]
        self.order = corpus.shuffled(item, rng)
        self.depths = [rng.random() for _ in support]
        self.support = [support_block(p, item) for p in support]
        answer = item.answers[0] if item.answers else None
        self.reserve = reserve
        self.fixed = counts.request(item.question, "", answer) + reserve
        self.fixed += sum(counts.block(p.text) for p in support)
        self.read: list[int] = []
        self.sums = [0]
        """Estimated tokens of the first n distractors read, for every n."""

    def _read_past(self, room: int) -> None:
        """Read distractors until their sum passes ``room`` or the pool ends."""
        while self.sums[-1] <= room:
            i = next(self.order, None)
            if i is None:
                return
            self.read.append(i)
            self.sums.append(self.sums[-1] + self.counts.block(self.corpus.passages[i].text))

    def blocks(self, budget: int, floor: int) -> tuple[list[Block], int]:
        """The plan whose estimate lands in ``[floor, budget]`` tokens, and that estimate (the
        next passage is cut only when :data:`MIN_PIECE` tokens fit); :class:`AssemblyError`
        when the supporting passages alone pass ``budget`` or the corpus cannot reach
        ``floor``."""
        room = budget - self.fixed
        if room < 0:
            raise AssemblyError(
                f"the supporting passages and prompt alone take {self.fixed} tokens, over {budget}"
            )
        self._read_past(room)
        whole = bisect_right(self.sums, room) - 1
        passages = self.corpus.passages
        chosen = [_whole(passages[i]) for i in self.read[:whole]]
        total = self.fixed + self.sums[whole]
        header = self.counts.text(HEADER)
        if whole < len(self.read) and room - self.sums[whole] - header >= MIN_PIECE:
            passage = passages[self.read[whole]]
            left = budget - total - header
            text = self._cut(passage.text, left, floor - total - header)
            if text:
                chosen.append(Block(passage.passage_id, (Segment(text),)))
                total += self.counts.tokenizer.count(text) + header
        if total < floor:
            raise AssemblyError(
                f"the corpus fills about {total} of {budget} tokens; add documents or lower "
                "the level"
            )
        return place_support(chosen, self.support, self.depths), total

    def _cut(self, text: str, most: int, least: int) -> str:
        """The longest prefix of ``text`` ending a sentence within ``most`` tokens; when that
        leaves fewer than ``least``, the longest ending a word."""
        best = _longest(sentence_starts(text)[1:], text, most, self.counts, True)
        if best and self.counts.tokenizer.count(best) >= least:
            return best
        return _longest(list(word_ends(text, self.item.language)), text, most, self.counts, False)


def _whole(passage: Passage) -> Block:
    return Block(passage.passage_id, (Segment(passage.text),))


def _longest(ends: Sequence[int], text: str, most: int, counts: TokenCounts, strip: bool) -> str:
    """The longest of ``text[:end]`` (right-stripped when ``strip``) within ``most`` tokens, by a
    binary search over ``ends`` (tokens grow with the prefix); "" when none fits."""

    def piece(end: int) -> str:
        return text[:end].rstrip() if strip else text[:end]

    fit = bisect_right(ends, most, key=lambda end: counts.tokenizer.count(piece(end)))
    return piece(ends[fit - 1]) if fit else ""


def assemble_tokens(plan: Plan, tokens: int, measure: Measure, *, tolerance: float) -> list[Block]:
    """The plan at ``tokens`` whose every variant's exact request count, from ``measure``, lands
    in ``[tokens x (1 - tolerance), tokens]``. The estimate is aimed at the most a variant may
    count and at the floor plus the facts' reserve (the clean variant lacks them), then both
    aims are corrected by how far the estimate missed the exact counts; :class:`AssemblyError`
    after :data:`MAX_STEPS`, or when the aims stop moving or cross (the variants spread wider
    than the tolerance)."""
    floor = int(tokens * (1 - tolerance))
    aim = (tokens, floor + plan.reserve)
    low = high = 0
    for _ in range(MAX_STEPS):
        if aim[1] > aim[0]:
            break
        blocks, estimate = plan.blocks(*aim)
        low, high = measure(blocks)
        if low >= floor and high <= tokens:
            return blocks
        corrected = (tokens + estimate - high, floor + estimate - low)
        if corrected == aim:
            break
        aim = corrected
    closest = f"the closest: {low} to {high}" if high else f"the facts alone add {plan.reserve}"
    raise AssemblyError(
        f"no cut puts every variant's request in [{floor}, {tokens}] tokens ({closest})"
    )
