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


PROLOG_CHARS = 1 << 20
"""How much of a file's start is searched for its first element; a real dump's prolog is an XML
declaration of a few dozen characters."""
DRAIN_BYTES = 32 << 20
"""How far past malformed XML a compressed file is decompressed to tell corrupt data (which fails
its integrity check within one bz2 block, or soon after in gzip) from well-compressed bad XML."""
_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
_ELEMENT_RE = re.compile(r"<[A-Za-z_:]")


def prolog_end(head: str) -> int | None:
    """Where the first element starts in ``head`` (comments skipped), or None when not yet."""
    found = _ELEMENT_RE.search(_COMMENT_RE.sub("", head))
    return found.start() if found else None


def refuse_declarations(head: str, where: str) -> None:
    """Raise :class:`SourceFormatError` when the prolog at the start of ``head`` has a
    ``<!DOCTYPE … [ … ]>`` of its own: entity declarations are how entity-expansion bombs and
    external entities get in, and a MediaWiki dump never has one. Checked before any parsing."""
    text = _COMMENT_RE.sub("", head)
    found = _ELEMENT_RE.search(text)
    prolog = text[: found.start()] if found else text
    doctype = prolog.find("<!DOCTYPE")
    if doctype < 0:
        return
    declared = prolog[doctype:]
    if "<!ENTITY" in declared:
        what = "declares entities (<!ENTITY …>) in its <!DOCTYPE>"
    elif "[" in declared or found is None:
        what = "has a <!DOCTYPE> with declarations of its own"
    else:
        return
    raise SourceFormatError(
        f"{where}: {what}, which MediaWiki XML never has (a way in for entity expansion and "
        "external entities); refused before reading it"
    )


class XmlSource:
    """``with XmlSource(path, events) as xml: for event, elem in xml: ...``.

    The bytes are decoded here (byte-order mark, declared encoding, else UTF-8); a byte that
    does not decode, or a character XML forbids, becomes :data:`UNREADABLE` instead of ending
    the parse, so the reader can set aside just the page that holds it. Malformed XML, a
    truncated or corrupt ``.bz2`` / ``.gz`` stream (also when its bad data first shows as
    malformed XML), and bad values met while reading (a ``ValueError`` such as an unparsable
    timestamp), leave the block as :class:`SourceFormatError` naming the file and line. A
    prolog declaring entities is refused before anything is parsed (:func:`refuse_declarations`).
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
        for text in self._texts():
            self._lines_fed += text.count("\n")
            self._parser.feed(text)
            yield from self._parser.read_events()
        if self._decoder is not None:
            self._parser.feed(self._decode(b"", final=True))
        self._parser.close()
        yield from self._parser.read_events()

    def _texts(self) -> Iterator[str]:
        """The decoded text, chunk by chunk; the prolog is read whole and checked first."""
        head = ""
        while prolog_end(head) is None and len(head) < PROLOG_CHARS:
            chunk = self._read_chunk()
            if not chunk:
                break
            head += self._decode(chunk)
        refuse_declarations(head, str(self.path))
        if head:
            yield head
        while chunk := self._read_chunk():
            yield self._decode(chunk)

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

    def _corrupt_data(self) -> str | None:
        """Why the rest of a compressed file does not decompress (read up to
        :data:`DRAIN_BYTES` on), or None when it does or the file is not compressed."""
        if self._stream is None or self.path.suffix not in COMPRESSED:
            return None
        read1 = self._stream.read1  # type: ignore[attr-defined]
        drained = 0
        try:
            while drained < DRAIN_BYTES and (chunk := read1(CHUNK_BYTES)):
                drained += len(chunk)
        except (EOFError, OSError, zlib.error) as exc:
            return str(exc) or type(exc).__name__
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        corrupt = self._corrupt_data() if isinstance(exc, ET.ParseError) else None
        if self._stream is not None:
            self._stream.close()
        if isinstance(exc, ET.ParseError):
            line, column = exc.position
            if corrupt is not None:
                raise SourceFormatError(
                    f"{self.path}: corrupt compressed file: its {self.path.suffix} data fails "
                    f"its integrity check ({corrupt}), so the XML decompressed from it breaks "
                    f"at line {line}, column {column}"
                ) from exc
            raise SourceFormatError(
                f"{self.path}: malformed XML at line {line}, column {column}: {exc}"
            ) from exc
        if isinstance(exc, ValueError):
            raise self.fail(f"bad value ({exc})") from exc
