"""Candidate-first reading of a ``pages-articles-multistream`` dump: seek to the bz2 streams that
hold the candidate pages, found in the dump's index, instead of parsing every page.

Wikimedia's multistream dumps are concatenated bz2 streams: the first holds the XML header and
``<siteinfo>``, each following one up to 100 ``<page>`` elements, and the last the closing tag.
The index (``...-multistream-index.txt.bz2``) has one ``offset:page_id:title`` line per page,
``offset`` being the byte where the bz2 stream holding the page starts. A month's refresh needs
the pages created in that month: their streams are decompressed and their XML read; no other
page's wikitext is parsed.
"""

from __future__ import annotations

import bz2
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from pipelines.errors import SourceFormatError
from pipelines.sources.wiki.dump import SiteInfo, _Page, page_from, site_from
from pipelines.sources.wiki.xml_source import (
    PROLOG_CHARS,
    local,
    open_maybe_compressed,
    refuse_declarations,
)

READ_BYTES = 1 << 16


@dataclass
class IndexLookup:
    """Where the candidate titles are: their streams' offsets, and the titles the index lacks."""

    streams: dict[int, set[str]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    index_lines: int = 0


@dataclass
class StreamStats:
    """What a candidate-first read touched."""

    streams_read: int = 0
    pages_seen: int = 0
    pages_read: int = 0


def find_in_index(index: Path, titles: Collection[str]) -> IndexLookup:
    """The streams holding ``titles``, read from the ``offset:page_id:title`` lines of
    ``index`` (plain, .bz2 or .gz); a malformed line is a :class:`SourceFormatError` naming it."""
    wanted = set(titles)
    found: dict[int, set[str]] = defaultdict(set)
    lines = 0
    with open_maybe_compressed(index) as raw:
        for lines, line in enumerate(raw, 1):
            text = line.decode("utf-8").rstrip("\n")
            if not text:
                continue
            parts = text.split(":", 2)
            if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
                raise SourceFormatError(
                    f"{index}:{lines}: not an 'offset:page_id:title' line: {text[:120]!r}"
                )
            if parts[2] in wanted:
                found[int(parts[0])].add(parts[2])
    seen = set().union(*found.values()) if found else set()
    return IndexLookup(dict(found), sorted(wanted - seen), lines)


def stream_at(handle: IO[bytes], offset: int, where: str) -> bytes:
    """The decompressed bz2 stream starting at byte ``offset`` of an open dump."""
    handle.seek(offset)
    decompressor = bz2.BZ2Decompressor()
    parts = []
    while not decompressor.eof:
        chunk = handle.read(READ_BYTES)
        if not chunk:
            raise SourceFormatError(f"{where}: the bz2 stream at byte {offset} is cut short")
        try:
            parts.append(decompressor.decompress(chunk))
        except OSError as exc:
            raise SourceFormatError(
                f"{where}: no bz2 stream at byte {offset}, or a corrupt one ({exc})"
            ) from exc
    return b"".join(parts)


def _fragment(data: bytes, where: str, offset: int) -> ET.Element:
    """One stream's XML, closed into a document of its own; a stream declaring entities is
    refused before it is parsed (:func:`refuse_declarations`)."""
    refuse_declarations(
        data[:PROLOG_CHARS].decode("latin-1"), f"{where}: the stream at byte {offset}"
    )
    text = data.replace(b"</mediawiki>", b"")
    if b"<mediawiki" not in text:
        text = b"<mediawiki>" + text
    try:
        return ET.fromstring(text + b"</mediawiki>")
    except ET.ParseError as exc:
        raise SourceFormatError(f"{where}: the stream at byte {offset} is not XML ({exc})") from exc


def site_of(dump: Path) -> SiteInfo:
    """The ``<siteinfo>`` of a multistream dump, from its first stream."""
    with open(dump, "rb") as handle:
        root = _fragment(stream_at(handle, 0, str(dump)), str(dump), 0)
    for child in root:
        if local(child.tag) == "siteinfo":
            return site_from(child)
    return SiteInfo()


def candidate_pages(
    dump: Path, lookup: IndexLookup, stats: StreamStats | None = None
) -> Iterator[tuple[SiteInfo, _Page]]:
    """``(siteinfo, page)`` for every candidate page of ``lookup``, in dump order, reading only
    the streams that hold them; the other pages of those streams are skipped unparsed."""
    stats = stats if stats is not None else StreamStats()
    site = site_of(dump)
    with open(dump, "rb") as handle:
        for offset in sorted(lookup.streams):
            wanted = lookup.streams[offset]
            data = stream_at(handle, offset, str(dump))
            stats.streams_read += 1
            for elem in _fragment(data, str(dump), offset):
                if local(elem.tag) != "page":
                    continue
                stats.pages_seen += 1
                title = next((c.text or "" for c in elem if local(c.tag) == "title"), "")
                if title in wanted:
                    stats.pages_read += 1
                    yield site, page_from(elem, f"{dump} (stream at byte {offset})")
