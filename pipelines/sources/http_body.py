"""Response bodies: bounded decompression, content-type gate and charset detection."""

from __future__ import annotations

import codecs
import re
import zlib

_META_CHARSET_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


class TooLargeError(ValueError):
    """A body grew past the byte cap, before or after decompression."""


def decompress(raw: bytes, encoding: str, cap: int) -> bytes:
    """Undo ``Content-Encoding`` (gzip, deflate), refusing output past ``cap`` bytes.

    A corrupt body is a ValueError, like an unsupported encoding.
    """
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise ValueError(f"unsupported Content-Encoding {encoding!r}")
    wbits = zlib.MAX_WBITS | 32 if encoding != "deflate" else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    try:
        try:
            out = inflater.decompress(raw, cap + 1)
        except zlib.error:
            if encoding != "deflate":
                raise
            inflater = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
            out = inflater.decompress(raw, cap + 1)
    except zlib.error as exc:
        raise ValueError(f"corrupt {encoding} body: {exc}") from exc
    if len(out) > cap or inflater.unconsumed_tail:
        raise TooLargeError(f"more than {cap} bytes once decompressed")
    return out


def media_type(content_type: str) -> tuple[str, str]:
    """Split a Content-Type header into its lower-case media type and declared charset."""
    parts = [p.strip() for p in content_type.split(";")]
    charset = ""
    for part in parts[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
    return parts[0].lower(), charset


def _known(charset: str) -> str:
    try:
        return codecs.lookup(charset).name
    except LookupError:
        return ""


def decode_text(body: bytes, declared: str) -> tuple[str, str]:
    """Decode ``body``: the declared charset if valid, else a ``<meta>`` one, else detection.

    Returns the text and the charset used. A declared charset that does not decode the body
    cleanly, or is no text encoding at all (``base64``), is ignored (servers often lie).
    """
    candidates = [declared]
    match = _META_CHARSET_RE.search(body[:4096])
    if match:
        candidates.append(match.group(1).decode("ascii", "replace"))
    for candidate in candidates:
        name = _known(candidate) if candidate else ""
        if name:
            try:
                return body.decode(name), name
            except (UnicodeDecodeError, LookupError):  # LookupError: base64 and other non-text
                continue
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(body).best()
    if best is None:
        return body.decode("utf-8", errors="replace"), "utf-8"
    return str(best), best.encoding
