"""Which passages mention a phrase, without reading every passage.

A distractor must mention none of its item's answers: ``needle in text`` over the normal forms
(:func:`builders.lveval.text.normal_form`), which for every item against every passage grows with
the square of the world. :class:`MentionIndex` answers the same question from an inverted index
and checks each candidate with the same substring test, so its answer is exactly the scan's:

- a needle of space-separated words with a space at each end (an English normal form) can only
  occur where each of its words is a whole whitespace-separated word of the text, so the
  candidates are the texts holding all its words (:func:`_candidates`);
- a needle without whitespace (a Chinese normal form, which may start or end inside a word) can
  only occur in texts holding each of its characters, so the candidates are the texts holding
  them all (this index is built on first use);
- any other needle (empty, or with other whitespace) is looked for in every text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

SKIP_RATIO = 32
"""A substring test of a passage costs about as much as reading this many postings."""


class MentionIndex:
    """Texts by the words and characters they hold, built once."""

    def __init__(self, texts: Sequence[str]):
        self.texts = texts
        self._words = _postings(text.split() for text in texts)
        self._chars: dict[str, list[int]] | None = None

    def containing(self, needle: str) -> list[int]:
        """The positions of the texts that contain ``needle``, in order: the same list as
        ``[i for i, text in enumerate(texts) if needle in text]``."""
        words = needle.split()
        if words and needle == f" {' '.join(words)} ":
            postings = [self._words.get(word, []) for word in words]
        elif words == [needle]:
            if self._chars is None:
                self._chars = _postings(self.texts)
            postings = [self._chars.get(char, []) for char in set(needle)]
        else:
            return [i for i, text in enumerate(self.texts) if needle in text]
        return [i for i in _candidates(postings) if needle in self.texts[i]]


def _candidates(postings: list[list[int]]) -> list[int]:
    """The positions in every posting list, ascending; a list much longer than the candidates
    so far is skipped (reading it would cost more than the substring tests it saves)."""
    postings = sorted(postings, key=len)
    found = set(postings[0])
    for more in postings[1:]:
        if len(more) > SKIP_RATIO * len(found):
            break
        found.intersection_update(more)
    return sorted(found)


def _postings(units: Iterable[Iterable[str]]) -> dict[str, list[int]]:
    """For each unit (word or character), the positions of the texts holding it, ascending."""
    index: dict[str, list[int]] = {}
    for i, held in enumerate(units):
        for unit in set(held):
            index.setdefault(unit, []).append(i)
    return index
