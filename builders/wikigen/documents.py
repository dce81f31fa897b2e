"""Related-document candidates of an event: human-editor links and search results, deduplicated.

Human-editor documents come first (citations, then External links), then search results in rank
order, so when a search result repeats a human link the human one is kept and the search one is
recorded as a ``duplicate``. WikiGenBench kept 58 such repeats; here they are counted, not kept.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Protocol

from builders.wikigen.records import Article, WebDocument

PENDING = "pending"


class Hit(Protocol):
    """What a search result must offer (``pipelines.sources.web.search.SearchHit`` does)."""

    query: str
    rank: int
    url: str
    title: str
    snippet: str


def doc_id(event: str, canonical: str) -> str:
    """A stable document id from the event and the canonical URL."""
    return hashlib.sha1(f"{event}\n{canonical}".encode()).hexdigest()[:16]


def content_hash(text: str) -> str:
    """Hash of the text with whitespace and case folded, for exact-duplicate detection."""
    return hashlib.sha1(" ".join(text.split()).casefold().encode()).hexdigest()


def candidates(
    event: str,
    article: Article,
    hits: Iterable[Hit],
    canonical: Callable[[str], str],
    excluded: Callable[[str], bool],
) -> list[WebDocument]:
    """Every candidate document of one event, each ``pending`` or already settled.

    ``excluded`` marks Wikipedia and its mirrors (status ``mirror``); a canonical URL seen before
    in this event makes a ``duplicate``; a URL ``canonical`` rejects with a ValueError is an
    ``error``.
    """
    found: list[WebDocument] = []
    first: dict[str, str] = {}

    def add(origin: str, url: str, hit: Hit | None = None, cite_text: str = "") -> None:
        if not re.match(r"^https?://", url):
            return
        key, status, reason = url, PENDING, ""
        try:
            key = canonical(url)
        except ValueError as exc:  # a malformed URL is kept, as an error that names it
            status, reason = "error", str(exc)
        if excluded(url):
            status, reason = "mirror", "Wikipedia or a known mirror"
        elif key in first:
            status, reason = "duplicate", f"same URL as the {first[key]} document"
        else:
            first[key] = origin
        ident = doc_id(event, key if status != "duplicate" else f"{key}#{len(found)}")
        found.append(
            WebDocument(
                event,
                ident,
                origin,
                url,
                key,
                status,
                reason,
                cite_text=cite_text,
                query=hit.query if hit else "",
                rank=hit.rank if hit else None,
                snippet=hit.snippet if hit else "",
                title=hit.title if hit else "",
            )
        )

    for ref in article.references:
        add("human", ref.url, cite_text=ref.cite_text)
    for link in article.external_links:
        add("human", link.url, cite_text=link.title)
    for hit in hits:
        add("search", hit.url, hit=hit)
    return found


def mark_text_duplicates(documents: list[WebDocument]) -> list[WebDocument]:
    """Within one event, keep the first ``ok`` document of each text; later ones are duplicates."""
    seen: dict[str, str] = {}
    out = []
    for doc in documents:
        if doc.status == "ok" and doc.content_hash:
            if doc.content_hash in seen:
                doc = replace(
                    doc, status="duplicate", reason=f"same text as {seen[doc.content_hash]}"
                )
            else:
                seen[doc.content_hash] = doc.url
        out.append(doc)
    return out
