"""Content sniffing: a body that is binary whatever its Content-Type says (an image served as
``text/html``) is refused before it is decoded as text."""

from __future__ import annotations

import codecs

SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"\x00\x00\x01\x00", "ICO image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x1f\x8b\x08", "gzip data"),
    (b"\xfd7zXZ\x00", "xz data"),
    (b"(\xb5/\xfd", "zstd data"),
    (b"7z\xbc\xaf\x27\x1c", "7z archive"),
    (b"Rar!\x1a\x07", "RAR archive"),
    (b"\x7fELF", "ELF executable"),
    (b"\x00asm", "WebAssembly module"),
    (b"OggS\x00", "Ogg media"),
    (b"\x1aE\xdf\xa3", "WebM/Matroska media"),
    (b"wOFF", "WOFF font"),
    (b"wOF2", "WOFF2 font"),
)
"""Leading bytes of binary formats, from the WHATWG MIME Sniffing Standard (sections 6.1 to 6.4:
images, audio and video, fonts, archives) and the formats' own specifications."""

_RIFF = {b"WEBP": "WebP image", b"WAVE": "WAV audio", b"AVI ": "AVI video"}
_UNICODE_BOMS = (codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF8)
HEAD_BYTES = 8000
"""Bytes searched for a NUL: the first 8000, as Git does to tell binary files from text
(``buffer_is_binary`` in its ``xdiff-interface.c``)."""


def binary_kind(body: bytes, charset: str = "") -> str:
    """What binary format ``body`` is (``"PNG image"``), or ``""`` when it may be text.

    A body is binary when it starts with a known signature (:data:`SIGNATURES`, RIFF containers,
    ISO media ``ftyp`` boxes) or holds a NUL byte in its first :data:`HEAD_BYTES`, unless it is
    UTF-16 or UTF-32 (a byte-order mark, or ``charset`` naming one), where NUL bytes are text.
    """
    for magic, kind in SIGNATURES:
        if body.startswith(magic):
            return kind
    if body.startswith(b"RIFF") and body[8:12] in _RIFF:
        return _RIFF[body[8:12]]
    if body[4:8] == b"ftyp":
        return "ISO media (MP4, MOV, HEIF)"
    if body.startswith(_UNICODE_BOMS) or charset.lower().replace("_", "-").startswith(
        ("utf-16", "utf-32")
    ):
        return ""
    if b"\x00" in body[:HEAD_BYTES]:
        return "binary data (NUL bytes)"
    return ""
