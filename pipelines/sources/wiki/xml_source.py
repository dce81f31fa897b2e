"""Streaming reads of MediaWiki XML files (exports, dumps, log dumps), plain or compressed."""

from __future__ import annotations

import bz2
import codecs
import gzip
import re
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO

from pipelines.errors import SourceFormatError


def open_maybe_compressed(path: Path) -> IO[bytes]:
    """Open ``path`` for binary reading, decompressing ``.bz2`` and ``.gz`` on the fly."""
    if path.suffix == ".bz2":
        return bz2.open(path, "rb")
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return path.open("rb")


def parse_timestamp(value: str) -> datetime:
    """Parse a MediaWiki ISO timestamp such as ``2026-03-04T09:12:00Z``; ValueError if blank."""
    if not value.strip():
        raise ValueError("missing or empty timestamp")
    return datetime.strptime(value.strip(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def local(tag: str) -> str:
    """Strip the XML namespace from a tag name."""
    return tag.rsplit("}", 1)[-1]


CHUNK_BYTES = 1 << 16
COMPRESSED = (".bz2", ".gz")

UNREADABLE = "\ufdd0"
"""Stands in for bytes that do not decode and for characters XML forbids (a Unicode
noncharacter, never in real text), so that only the page holding them is lost."""
codecs.register_error("benchsmith-unreadable", lambda err: (UNREADABLE, err.end))
_FORBIDDEN_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_DECLARED_RE = re.compile(rb"""^<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def declared_encoding(head: bytes) -> str:
    """The encoding of an XML file from its first bytes: a byte-order mark, else the
    declaration's ``encoding``, else UTF-8."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    declared = _DECLARED_RE.match(head)
    if declared:
        try:
            return codecs.lookup(declared[1].decode("ascii")).name
        except LookupError:
            pass
    return "utf-8"


class XmlSource:
    """``with XmlSource(path, events) as xml: for event, elem in xml: ...``.

    The bytes are decoded here (byte-order mark, declared encoding, else UTF-8); a byte that
    does not decode, or a character XML forbids, becomes :data:`UNREADABLE` instead of ending
    the parse, so the reader can set aside just the page that holds it. Malformed XML, a
    truncated or corrupt ``.bz2`` / ``.gz`` stream, and bad values met while reading (a
    ``ValueError`` such as an unparsable timestamp), leave the block as
    :class:`SourceFormatError` naming the file and line.
    """

    def __init__(self, path: Path, events: tuple[str, ...] = ("end",)):
        self.path = path
        self.events = events
        self._stream: IO[bytes] | None = None
        self._parser = ET.XMLPullParser(events=events)
        self._lines_fed = 0
        self._decoder: codecs.IncrementalDecoder | None = None

    def __enter__(self) -> XmlSource:
        self._stream = open_maybe_compressed(self.path)
        return self

    def __iter__(self) -> Iterator[tuple[str, ET.Element]]:
        assert self._stream is not None, "use XmlSource as a context manager"
        while chunk := self._read_chunk():
            text = self._decode(chunk)
            self._lines_fed += text.count("\n")
            self._parser.feed(text)
            yield from self._parser.read_events()
        if self._decoder is not None:
            self._parser.feed(self._decode(b"", final=True))
        self._parser.close()
        yield from self._parser.read_events()

    def _decode(self, chunk: bytes, final: bool = False) -> str:
        if self._decoder is None:
            encoding = declared_encoding(chunk[:200])
            self._decoder = codecs.getincrementaldecoder(encoding)("benchsmith-unreadable")
        return _FORBIDDEN_RE.sub(UNREADABLE, self._decoder.decode(chunk, final))

    def _read_chunk(self) -> bytes:
        assert self._stream is not None
        try:
            return self._stream.read1(CHUNK_BYTES)  # type: ignore[attr-defined]
        except (EOFError, OSError, zlib.error) as exc:  # cut short, not that format, bad data
            if self.path.suffix not in COMPRESSED:
                raise
            raise self.fail(f"truncated or corrupt {self.path.suffix} data ({exc})") from exc

    @property
    def line(self) -> int:
        """The last line fed to the parser: what is being read now lies at or before it."""
        return self._lines_fed + 1

    def fail(self, message: str) -> SourceFormatError:
        """Return an error naming the file and where reading had got to."""
        return SourceFormatError(f"{self.path}: {message} (by line {self.line})")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._stream is not None:
            self._stream.close()
        if isinstance(exc, ET.ParseError):
            line, column = exc.position
            raise SourceFormatError(
                f"{self.path}: malformed XML at line {line}, column {column}: {exc}"
            ) from exc
        if isinstance(exc, ValueError):
            raise self.fail(f"bad value ({exc})") from exc
