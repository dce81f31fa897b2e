"""Response bodies: bounded decompression, binary sniffing and charset detection, the checks
live fetching and replay share (:func:`read_body`)."""

from __future__ import annotations

import codecs
import re
import zlib
from typing import NamedTuple

from pipelines.sources.web.sniff import binary_kind

_META_CHARSET_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_GZIP_MAGIC = b"\x1f\x8b"

ACCEPT_ENCODING = "gzip, deflate"
"""What the fetcher asks for: the encodings :func:`decompress` undoes (brotli is not installed)."""

# WHATWG encoding labels that Python's codec registry does not know, mapped to the codec it has
_ALIASES = {
    "utf8mb4": "utf-8",
    "unicode-1-1-utf-8": "utf-8",
    "unicode11utf8": "utf-8",
    "unicode20utf8": "utf-8",
    "x-unicode20utf8": "utf-8",
    "windows-874": "cp874",
    "dos-874": "cp874",
    "x-cp1250": "cp1250",
    "x-cp1251": "cp1251",
    "x-cp1252": "cp1252",
    "x-sjis": "shift_jis",
    "x-euc-jp": "euc_jp",
    "cseuckr": "euc_kr",
    "x-gbk": "gbk",
    "gb_2312-80": "gb2312",
    "x-x-big5": "big5",
    "iso-8859-8-i": "iso8859-8",
    "x-mac-roman": "mac-roman",
    "x-mac-cyrillic": "mac-cyrillic",
}


class TooLargeError(ValueError):
    """A body grew past the byte cap, before or after decompression."""


def decompress(raw: bytes, encoding: str, cap: int) -> bytes:
    """Undo ``Content-Encoding`` (gzip, deflate), refusing output past ``cap`` bytes.

    A corrupt body, one cut short before the end of its compressed stream, or an unsupported
    encoding is a ValueError naming the encoding; an empty body stays empty. Concatenated gzip
    members are all inflated; bytes after the last member that start no new one are ignored,
    as browsers do.
    """
    encoding = encoding.strip().lower()
    if encoding in ("", "identity") or not raw:  # an empty body (a 204) is labelled gzip too
        return raw
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise ValueError(f"unsupported Content-Encoding {encoding!r}")
    try:
        if encoding != "deflate":
            return _inflate(raw, zlib.MAX_WBITS | 32, cap, members=True)  # gzip or zlib header
        try:
            return _inflate(raw, zlib.MAX_WBITS, cap)
        except zlib.error:  # no zlib header: raw deflate, as some servers send
            return _inflate(raw, -zlib.MAX_WBITS, cap)
    except (zlib.error, EOFError) as exc:
        raise ValueError(f"corrupt {encoding} body: {exc}") from exc


def _inflate(raw: bytes, wbits: int, cap: int, *, members: bool = False) -> bytes:
    """Inflate ``raw`` whole; a stream without its end is an EOFError, too much a TooLargeError."""
    out = bytearray()
    data = raw
    while True:
        inflater = zlib.decompressobj(wbits)
        out += inflater.decompress(data, cap + 1 - len(out))  # never 0, which means no limit
        if len(out) > cap or inflater.unconsumed_tail:
            raise TooLargeError(f"more than {cap} bytes once decompressed")
        if not inflater.eof:
            raise EOFError(f"truncated, the compressed stream of {len(raw)} bytes has no end")
        data = inflater.unused_data
        if not (members and data.startswith(_GZIP_MAGIC)):
            return bytes(out)


def media_type(content_type: str) -> tuple[str, str]:
    """Split a Content-Type header into its lower-case media type and declared charset."""
    parts = [p.strip() for p in content_type.split(";")]
    charset = ""
    for part in parts[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
    return parts[0].lower(), charset


def text_codec(label: str) -> str:
    """Python's name for the text encoding ``label``; "" if unknown or no text encoding."""
    label = label.strip().lower()
    try:
        name = codecs.lookup(_ALIASES.get(label, label)).name
        b"a".decode(name)  # LookupError for base64, rot13 and other non-text codecs
    except LookupError:
        return ""
    except UnicodeDecodeError:  # a text codec all the same (utf-16 wants two bytes)
        pass
    return name


class Decoded(NamedTuple):
    """A decoded body: its text, the charset used, and what went wrong ("" if nothing)."""

    text: str
    charset: str
    note: str = ""


def _mostly_utf8(text: str) -> bool:
    """Whether ``text``, decoded as UTF-8 with replacement, holds at least as many good
    non-ASCII characters as replaced bytes: UTF-8 with a few stray bytes, not a page in another
    charset labelled UTF-8 (whose non-ASCII bytes almost never form UTF-8)."""
    bad = text.count("\ufffd")
    good = sum(1 for ch in text if ch > "\x7f") - bad
    return good > 0 and good >= bad


def decode_text(body: bytes, declared: str) -> Decoded:
    """Decode ``body`` by the charset declared in the header, else in a ``<meta>``.

    The first declared charset that decodes the body cleanly wins, but a declared UTF-8 that
    the body mostly is wins even with invalid bytes, which become U+FFFD. When nothing declared
    decodes it, a body valid as UTF-8 is UTF-8 (servers often lie), and any other is decoded by
    the first declared charset with replacement. Only a body that declares no charset Python
    knows goes to charset detection. A declared label Python does not know, or no text
    encoding at all (``base64``), is ignored; it and any replaced bytes are named in the note.
    """
    labels = [declared] if declared else []
    match = _META_CHARSET_RE.search(body[:4096])
    if match:
        labels.append(match.group(1).decode("ascii", "replace"))
    names = {label: text_codec(label) for label in labels}
    known = list(dict.fromkeys(name for name in names.values() if name))
    notes = [f"unknown charset {label!r} ignored" for label, name in names.items() if not name]
    for name in known:
        try:
            return Decoded(body.decode(name), name, "; ".join(notes))
        except UnicodeDecodeError:
            if name == "utf-8" and _mostly_utf8(body.decode("utf-8", "replace")):
                return _decoded(body, name, notes)
    try:
        return Decoded(body.decode("utf-8"), "utf-8", "; ".join(notes))
    except UnicodeDecodeError:
        pass
    if known:
        return _decoded(body, known[0], notes)
    from charset_normalizer import from_bytes

    best = from_bytes(body).best()
    if best is None:
        return _decoded(body, "utf-8", notes)
    return Decoded(str(best), best.encoding, "; ".join(notes))


def _decoded(body: bytes, name: str, notes: list[str]) -> Decoded:
    """``body`` decoded as ``name``, invalid bytes replaced and counted in the note."""
    text = body.decode(name, "replace")
    replaced = text.count("\ufffd") - body.decode(name, "ignore").count("\ufffd")
    if replaced:
        notes = [*notes, f"{replaced} invalid {name} byte sequence(s) replaced by U+FFFD"]
    return Decoded(text, name, "; ".join(notes))


class Body(NamedTuple):
    """How a 2xx body ends: ``ok`` with its text and charset, or a failed status and reason."""

    status: str
    reason: str
    text: str = ""
    charset: str = ""


def read_body(raw: bytes, encoding: str, kind: str, declared: str, cap: int, where: str) -> Body:
    """The text of a 2xx body, under the checks live fetching and replay share.

    ``raw`` is the body as sent, with its ``Content-Encoding`` ``encoding``, media type ``kind``
    and declared charset; ``where`` (its URL) goes into the reasons. Over ``cap`` bytes, as sent
    or once decompressed, it is ``too_large`` (the decompression stops at the cap); one that
    does not decompress is an ``error``; a binary one (``sniff.binary_kind``: an image, a PDF,
    an archive), whatever its Content-Type says, is ``binary``, before any decoding; any other
    is decoded by :func:`decode_text`.
    """
    if len(raw) > cap:
        return Body("too_large", f"more than {cap} bytes")
    try:
        body = decompress(raw, encoding, cap)
    except TooLargeError as exc:
        return Body("too_large", str(exc))
    except (ValueError, OSError) as exc:
        return Body("error", f"undecodable body from {where}: {exc}")
    binary = binary_kind(body, declared)
    if binary:
        return Body("binary", f"{where} sent {binary}, labelled {kind or 'with no type'}")
    text, charset, note = decode_text(body, declared)
    return Body("ok", f"fetched; {note}" if note else "fetched", text, charset)
