"""Distractor pools fixed at an item's first release.

An LV-Eval context surrounds an item's supporting passages with distractors. Drawn from the
whole corpus, every context would change whenever a refresh adds an event. Instead an item
draws from the passages of the events created by the last day of its first release (and every
passage that belongs to no event, such as an imported QA set's), so later events never enter
it: an old item's records stay byte-identical across releases. The same pool gives the names
a confusing fact may swap in and the vocabulary replacement names are checked against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import cached_property

from builders.lveval import cfi, kpr
from builders.lveval.contexts import Corpus
from builders.lveval.records import Passage, QAItem
from builders.releases import Release, first_release


@dataclass(eq=False)
class Pool:
    """The passages open to items first released up to ``until`` (None: every passage)."""

    until: date | None
    passages: list[Passage]

    @cached_property
    def corpus(self) -> Corpus:
        """The passages as a distractor corpus."""
        return Corpus(self.passages)

    @cached_property
    def vocabulary(self) -> tuple[set[str], set[str]]:
        """Every word of the pool (lower-cased) and the words it also writes in lower case."""
        return kpr.vocabulary(p.text for p in self.passages)

    @cached_property
    def names(self) -> list[str]:
        """Proper-name phrases of the pool, most frequent first."""
        return cfi.name_pool(p.text for p in self.passages)


class Pools:
    """One :class:`Pool` per release window, built on first use."""

    def __init__(
        self,
        passages: Sequence[Passage],
        event_days: Mapping[str, date],
        releases: Sequence[Release],
    ):
        self.passages = list(passages)
        self.event_days = dict(event_days)
        self.releases = list(releases)
        self._pools: dict[date | None, Pool] = {}

    def until(self, item: QAItem) -> date | None:
        """The last creation day of the events ``item`` may draw distractors from: its event's
        first release's (the first release's for an item of no event); None without releases."""
        if not self.releases:
            return None
        return first_release(self.event_days.get(item.source), self.releases).until

    def of(self, item: QAItem) -> Pool:
        """The pool of ``item``."""
        until = self.until(item)
        if until not in self._pools:
            kept = [
                p
                for p in self.passages
                if until is None
                or p.source not in self.event_days
                or self.event_days[p.source] <= until
            ]
            self._pools[until] = Pool(until, kept)
        return self._pools[until]
