"""Write a ``pages-articles-multistream`` dump and its index as Wikimedia publishes them.

Format (Wikimedia's dump documentation): the dump is concatenated bz2 streams, the first with
the XML header and ``<siteinfo>``, then one stream per 100 ``<page>`` elements, then one with the
closing ``</mediawiki>``; the index is bz2-compressed text, one ``offset:page_id:title`` line per
page, ``offset`` the byte where that page's stream starts.
"""

from __future__ import annotations

import bz2
import re
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape, unescape

PAGES_PER_STREAM = 100
_PAGE = re.compile(rb"[ \t]*<page>.*?</page>\n?", re.DOTALL)
_TITLE = re.compile(rb"<title>(.*?)</title>", re.DOTALL)
_ID = re.compile(rb"<id>(\d+)</id>")


def split_export(export: Path) -> tuple[bytes, list[bytes]]:
    """An XML export's header (up to its first page) and each ``<page>`` element's bytes."""
    data = export.read_bytes()
    pages = _PAGE.findall(data)
    first = _PAGE.search(data)
    header = data[: first.start()] if first else data.replace(b"</mediawiki>", b"")
    return header, pages


def filler_page(page_id: int, title: str, words: int = 40) -> bytes:
    """A plain article page that no window selects (its only revision is old)."""
    text = " ".join(f"word{(page_id * 7 + i) % 997}" for i in range(words))
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        f"    <revision>\n      <id>{page_id * 10}</id>\n"
        "      <timestamp>2015-01-01T00:00:00Z</timestamp>\n      <model>wikitext</model>\n"
        f'      <format>text/x-wiki</format>\n      <text xml:space="preserve">'
        f"'''{escape(title)}''' is a filler article. {text}.\n\n== History ==\n{text}.</text>\n"
        "    </revision>\n  </page>\n"
    ).encode()


def write_multistream(
    header: bytes,
    pages: Iterable[bytes],
    dump: Path,
    index: Path,
    per_stream: int = PAGES_PER_STREAM,
) -> int:
    """Write ``dump`` and its bz2 ``index``; return the number of page streams."""
    lines: list[str] = []
    streams = 0
    with open(dump, "wb") as out:
        out.write(bz2.compress(header))
        batch: list[bytes] = []

        def flush() -> None:
            nonlocal streams
            offset = out.tell()
            for page in batch:
                title = _TITLE.search(page)
                page_id = _ID.search(page)
                assert title and page_id, "a page without title or id"
                name = unescape(title.group(1).decode(), {"&quot;": '"', "&apos;": "'"})
                lines.append(f"{offset}:{int(page_id.group(1))}:{name}")
            out.write(bz2.compress(b"".join(batch)))
            streams += 1
            batch.clear()

        for page in pages:
            batch.append(page)
            if len(batch) == per_stream:
                flush()
        if batch:
            flush()
        out.write(bz2.compress(b"</mediawiki>\n"))
    index.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    return streams
