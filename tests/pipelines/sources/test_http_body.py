import gzip
import zlib

import pytest

from pipelines.sources.http_body import TooLargeError, decode_text, decompress, media_type


def test_decompress_caps_the_inflated_size():
    packed = gzip.compress(b"a" * 10_000)
    assert decompress(packed, "gzip", 10_000) == b"a" * 10_000
    with pytest.raises(TooLargeError):
        decompress(packed, "gzip", 9_999)


def test_raw_deflate_is_accepted():
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    packed = raw.compress(b"hello") + raw.flush()
    assert decompress(packed, "deflate", 100) == b"hello"


def test_media_type_and_charset():
    assert media_type('text/HTML; charset="ISO-8859-1"') == ("text/html", "ISO-8859-1")
    assert media_type("") == ("", "")


def test_declared_charset_wins_when_it_decodes():
    text, charset = decode_text("Caf\u00e9".encode("cp1252"), "windows-1252")
    assert (text, charset) == ("Caf\u00e9", "cp1252")


def test_lying_declared_charset_falls_back_to_utf8():
    text, charset = decode_text("\u4e2d\u6587 caf\u00e9".encode(), "ascii")
    assert text == "\u4e2d\u6587 caf\u00e9" and charset == "utf-8"


def test_undeclared_legacy_text_is_detected():
    sentence = "Les r\u00e9fugi\u00e9s ont quitt\u00e9 la vall\u00e9e apr\u00e8s la crue. "
    text, charset = decode_text((sentence * 20).encode("latin-1"), "")
    assert "r\u00e9fugi\u00e9s" in text and charset


def test_corrupt_gzip_is_a_value_error():
    with pytest.raises(ValueError, match="corrupt gzip body"):
        decompress(b"not gzip at all", "gzip", 100)
    with pytest.raises(ValueError, match="corrupt deflate body"):
        decompress(b"not deflate at all", "deflate", 100)


def test_non_text_declared_charset_is_ignored():
    assert decode_text(b"<p>caf\xc3\xa9</p>", "base64") == ("<p>caf\u00e9</p>", "utf-8")
