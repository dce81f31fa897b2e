"""Binary sniffing: images, PDFs and archives are told from text whatever their label."""

from __future__ import annotations

import codecs
import gzip
import io
import zipfile

import pytest

from pipelines.sources.web.sniff import HEAD_BYTES, binary_kind
from tests.support.fault_server import ARTICLE, PNG


def _zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("page.html", ARTICLE)
    return out.getvalue()


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (PNG, "PNG image"),
        (b"GIF89a\x01\x00\x01\x00", "GIF image"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "JPEG image"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "WebP image"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "PDF document"),
        (_zip(), "ZIP archive"),
        (gzip.compress(ARTICLE), "gzip data"),  # a page gzipped twice
        (b"\x00\x00\x00\x20ftypisom", "ISO media (MP4, MOV, HEIF)"),
        (b"<html>" + b"\x00\x01\x02" * 10 + b"</html>", "binary data (NUL bytes)"),
    ],
)
def test_binary_bodies_are_named(body, kind):
    assert binary_kind(body) == kind


@pytest.mark.parametrize(
    ("body", "charset"),
    [
        (ARTICLE, ""),
        ("<p>Caf\u00e9 \u2013 \u0160koda</p>".encode(), "utf-8"),
        (b"<p>a form feed \x0c and an escape \x1b[0m</p>", ""),
        (codecs.BOM_UTF16_LE + "<p>caf\u00e9</p>".encode("utf-16-le"), ""),
        ("<p>caf\u00e9</p>".encode("utf-16-be"), "UTF-16BE"),
        ("<p>caf\u00e9</p>".encode("utf-32-le"), "utf_32_le"),
        (b"<p>text</p>" + b" " * HEAD_BYTES + b"\x00", ""),  # a NUL past the head
        (b"", ""),
    ],
)
def test_text_is_not_binary(body, charset):
    assert binary_kind(body, charset) == ""
