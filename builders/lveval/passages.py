"""Passages of mixup contexts from wikigen entries: the article's lead and sections, and the
usable related documents; long texts are split at paragraph, then sentence, boundaries."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from builders.lveval.records import Passage
from builders.lveval.text import length
from builders.text import sentences


def split_text(text: str, max_words: int, language: str = "en") -> list[str]:
    """Pieces of at most about ``max_words``, cut between sentences (a longer sentence stays
    whole); each piece is a verbatim slice of ``text``."""
    if length(text, language) <= max_words:
        return [text]
    pieces: list[str] = []
    first = words = 0
    for start, end in sentences(text):
        n = length(text[start:end], language)
        if words and words + n > max_words:
            pieces.append(text[first:start].strip())
            first, words = start, 0
        words += n
    pieces.append(text[first:].strip())
    return [p for p in pieces if p]


def entry_passages(
    entry: Mapping[str, Any], max_words: int, min_words: int = 20
) -> Iterator[Passage]:
    """The passages of one wikigen entry (a row of ``entries.parquet``)."""
    event = entry["event_id"]
    title = entry["title"]
    texts: list[tuple[str, str, str]] = [(f"{event}#lead", title, entry.get("summary") or "")]
    texts += [
        (f"{event}#s{k}", f"{title}: {s['title']}", s["text"])
        for k, s in enumerate(entry.get("sections") or [])
    ]
    texts += [(d["doc_id"], d["title"] or title, d["text"]) for d in entry.get("documents") or []]
    for passage_id, name, text in texts:
        if length(text) < min_words:
            continue
        pieces = split_text(text.strip(), max_words)
        for j, piece in enumerate(pieces):
            pid = passage_id if len(pieces) == 1 else f"{passage_id}~{j}"
            yield Passage(pid, event, name, piece)


def corpus(entries: Iterable[Mapping[str, Any]], max_words: int) -> list[Passage]:
    """Every entry's passages, each id once, in a stable order."""
    seen: dict[str, Passage] = {}
    for entry in entries:
        for passage in entry_passages(entry, max_words):
            seen.setdefault(passage.passage_id, passage)
    return sorted(seen.values(), key=lambda p: p.passage_id)
