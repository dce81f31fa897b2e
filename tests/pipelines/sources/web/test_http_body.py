import gzip
import zlib

import pytest

from pipelines.sources.web.http_body import (
    TooLargeError,
    decode_text,
    decompress,
    media_type,
    text_codec,
)

# a lone Latin-1 é among UTF-8: a charset detector calls the whole of it cp1250
STRAY = "Le caf\u00e9 na\u00efve de Z\u00fcrich, ".encode() + b"\xe9" + " \u00e9t\u00e9".encode()


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
    assert decode_text("Caf\u00e9".encode("cp1252"), "windows-1252") == ("Caf\u00e9", "cp1252", "")


def test_lying_declared_charset_falls_back_to_utf8():
    text, charset, _ = decode_text("\u4e2d\u6587 caf\u00e9".encode(), "ascii")
    assert text == "\u4e2d\u6587 caf\u00e9" and charset == "utf-8"


def test_undeclared_legacy_text_is_detected():
    sentence = "Les r\u00e9fugi\u00e9s ont quitt\u00e9 la vall\u00e9e apr\u00e8s la crue. "
    text, charset, _ = decode_text((sentence * 20).encode("latin-1"), "")
    assert "r\u00e9fugi\u00e9s" in text and charset


def test_corrupt_gzip_is_a_value_error():
    with pytest.raises(ValueError, match="corrupt gzip body"):
        decompress(b"not gzip at all", "gzip", 100)
    with pytest.raises(ValueError, match="corrupt deflate body"):
        decompress(b"not deflate at all", "deflate", 100)


def test_non_text_declared_charset_is_ignored():
    text, charset, note = decode_text(b"<p>caf\xc3\xa9</p>", "base64")
    assert (text, charset) == ("<p>caf\u00e9</p>", "utf-8") and "'base64'" in note


def test_truncated_or_corrupted_streams_are_value_errors():
    page = "<p>caf\u00e9</p>".encode() * 200
    packed = gzip.compress(page)
    with pytest.raises(ValueError, match="corrupt gzip body: truncated"):
        decompress(packed[:-8], "gzip", 100_000)  # the CRC and length trailer lost
    with pytest.raises(ValueError, match="corrupt gzip body"):
        decompress(packed[:-8] + bytes(8), "gzip", 100_000)  # a trailer that does not match
    zipped = zlib.compress(page)
    with pytest.raises(ValueError, match="corrupt deflate body: truncated"):
        decompress(zipped[: len(zipped) // 2], "deflate", 100_000)
    with pytest.raises(ValueError, match="corrupt deflate body"):
        decompress(zipped[:-4] + bytes(4), "deflate", 100_000)  # a wrong Adler-32


def test_gzip_members_are_all_inflated_and_empty_bodies_kept():
    assert decompress(gzip.compress(b"one ") + gzip.compress(b"two"), "gzip", 100) == b"one two"
    assert decompress(b"", "gzip", 100) == b""
    with pytest.raises(TooLargeError):
        decompress(gzip.compress(b"a" * 60) + gzip.compress(b"b" * 60), "gzip", 100)


def test_declared_utf8_with_a_stray_byte_is_utf8_with_a_replacement():
    text, charset, note = decode_text(STRAY, "utf-8")
    assert charset == "utf-8" and "1 invalid utf-8 byte" in note
    assert text == "Le caf\u00e9 na\u00efve de Z\u00fcrich, \ufffd \u00e9t\u00e9"


def test_utf8_declared_in_meta_or_header_beats_a_conflicting_declaration():
    meta = b'<meta charset="utf-8">' + STRAY
    assert decode_text(meta, "")[:2] == (meta.decode("utf-8", "replace"), "utf-8")
    lying_meta = b'<meta charset="windows-1252">' + STRAY
    text, charset, _ = decode_text(lying_meta, "utf-8")
    assert charset == "utf-8" and "Le caf\u00e9 na\u00efve" in text


def test_a_page_mislabelled_utf8_falls_to_its_meta_charset():
    body = b'<meta charset="iso-8859-1"><p>' + "Caf\u00e9 na\u00efve".encode("latin-1")
    text, charset, _ = decode_text(body, "utf-8")
    assert charset == "iso8859-1" and "Caf\u00e9 na\u00efve" in text


def test_a_declared_charset_is_never_second_guessed():
    # cp1252 text declared UTF-8 only: replacement characters, not a detector's guess
    body = ("Les r\u00e9fugi\u00e9s ont quitt\u00e9 la vall\u00e9e. " * 20).encode("cp1252")
    text, charset, note = decode_text(body, "utf-8")
    assert charset == "utf-8" and text == body.decode("utf-8", "replace")
    assert "80 invalid utf-8 byte" in note


def test_unknown_charsets_are_named_and_aliases_resolved():
    text, charset, note = decode_text("caf\u00e9".encode(), "x-klingon")
    assert (text, charset) == (
        "caf\u00e9",
        "utf-8",
    ) and note == "unknown charset 'x-klingon' ignored"
    assert text_codec("utf8mb4") == "utf-8" and text_codec("x-sjis") == "shift_jis"
    assert text_codec("base64") == "" and text_codec("") == ""
    assert decode_text("\u6771\u4eac".encode("shift_jis"), "x-sjis")[:2] == (
        "\u6771\u4eac",
        "shift_jis",
    )
