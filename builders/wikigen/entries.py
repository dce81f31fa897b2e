"""WikiGenBench entries: one row per event, its reference article and its usable documents."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

from builders.wikigen.records import Article, DocumentCount, Entry, EntryDocument, WebDocument


def event_id(article: Article) -> str:
    """A stable id for the event: the wiki's host and the page id (both survive renames)."""
    host = article.url.split("/")[2] if article.url.count("/") >= 3 else "wiki"
    return f"{host}:{article.page_id}"


def assign_split(key: str, seed: int, test_fraction: float) -> str:
    """``test`` or ``train`` from a hash of ``key`` and ``seed``; unaffected by other events."""
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    position = int.from_bytes(digest[:8], "big") / 2**64
    return "test" if position < test_fraction else "train"


def build_entry(
    article: Article, documents: Iterable[WebDocument], seed: int, test_fraction: float
) -> Entry:
    """The entry of one event: its article, its ``ok`` documents, every status counted."""
    key = event_id(article)
    docs = list(documents)
    counts = Counter((d.origin, d.status) for d in docs)
    return Entry(
        event_id=key,
        title=article.title,
        url=article.url,
        split=assign_split(key, seed, test_fraction),
        created_at=article.created_at,
        summary=article.summary,
        outline=article.outline,
        sections=article.sections,
        infobox=article.infobox,
        infobox_type=article.infobox_type,
        references=article.references,
        word_count=article.word_count,
        documents=[
            EntryDocument(d.doc_id, d.origin, d.url, d.title, d.text, d.word_count, d.fetched_at)
            for d in docs
            if d.status == "ok"
        ],
        document_counts=[
            DocumentCount(origin, status, n) for (origin, status), n in sorted(counts.items())
        ],
    )
