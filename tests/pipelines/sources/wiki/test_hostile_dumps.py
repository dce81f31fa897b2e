"""A dump that declares entities (an expansion bomb, an external entity) is refused before any
page is read, naming the file; a corrupt compressed dump is called that, not malformed XML."""

from __future__ import annotations

import bz2
import gzip
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipelines.errors import SourceFormatError
from pipelines.sources.wiki.creation_log import read_creation_log
from pipelines.sources.wiki.dump import read_dump
from pipelines.sources.wiki.multistream import candidate_pages, find_in_index
from pipelines.sources.wiki.xml_source import CHUNK_BYTES
from tests.support.multistream import filler_page, split_export, write_multistream
from tests.support.snapshot import SNAPSHOT_XML

ROOT_TAG = b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/">\n'
PAGE = filler_page(7, "Plain page")
LAUGHS = b'<!ENTITY lol0 "lol">\n' + b"".join(
    b'<!ENTITY lol%d "%s">\n' % (i, b"&lol%d;" % (i - 1) * 10) for i in range(1, 10)
)
"""The "billion laughs": nine levels of ten references, 10^9 copies of "lol" once expanded."""
AT = datetime(2026, 1, 1, tzinfo=UTC)

DOCTYPES = {
    "expansion": b"<!DOCTYPE mediawiki [\n" + LAUGHS + b"]>\n",
    "external": b'<!DOCTYPE mediawiki [<!ENTITY x SYSTEM "file:///etc/hostname">]>\n',
    "padded": b"<!DOCTYPE mediawiki [" + b" " * (3 * CHUNK_BYTES) + b'<!ENTITY x "y">]>\n',
}


def _dump(path: Path, doctype: bytes, reference: bytes = b"&lol9;") -> Path:
    page = PAGE.replace(b"</text>", reference + b"</text>")
    path.write_bytes(b'<?xml version="1.0"?>\n' + doctype + ROOT_TAG + page + b"</mediawiki>\n")
    return path


@pytest.mark.parametrize("kind", sorted(DOCTYPES))
def test_a_dump_declaring_entities_is_refused_before_any_page_is_read(tmp_path, kind):
    dump = _dump(
        tmp_path / f"{kind}.xml", DOCTYPES[kind], b"&x;" if kind != "expansion" else b"&lol9;"
    )
    started = time.perf_counter()
    with pytest.raises(SourceFormatError) as error:
        list(read_dump(dump))
    message = str(error.value)
    assert message.startswith(f"{dump}: declares entities (<!ENTITY …>) in its <!DOCTYPE>")
    assert "refused before reading it; no page was read" in message
    assert time.perf_counter() - started < 1  # nothing was expanded


def test_a_compressed_dump_declaring_entities_is_refused_too(tmp_path):
    plain = _dump(tmp_path / "bomb.xml", DOCTYPES["expansion"])
    packed = tmp_path / "bomb.xml.bz2"
    packed.write_bytes(bz2.compress(plain.read_bytes()))
    with pytest.raises(SourceFormatError, match=r"bomb\.xml\.bz2: declares entities"):
        list(read_dump(packed))


def test_a_creation_log_declaring_entities_is_refused(tmp_path):
    log = _dump(tmp_path / "logging.xml", DOCTYPES["external"], b"&x;")
    with pytest.raises(SourceFormatError, match=r"logging\.xml: declares entities"):
        read_creation_log(log, since=AT)


def test_a_doctype_without_declarations_is_read_as_before(tmp_path):
    plain = _dump(tmp_path / "plain.xml", b"", b"")
    declared = _dump(tmp_path / "declared.xml", b"<!-- exported -->\n<!DOCTYPE mediawiki>\n", b"")
    rows = [a.to_row() for a in read_dump(declared, read_at=AT)]
    assert rows and rows == [a.to_row() for a in read_dump(plain, read_at=AT)]


def _flipped(data: bytes) -> bytes:
    middle = bytearray(data)
    for i in range(len(data) // 2, len(data) // 2 + 50):
        middle[i] ^= 0x55
    return bytes(middle)


@pytest.mark.parametrize(
    ("name", "compress"), [("flipped.xml.gz", gzip.compress), ("flipped.xml.bz2", bz2.compress)]
)
def test_a_corrupt_compressed_dump_is_called_corrupt_not_malformed(
    tmp_path, name: str, compress: Callable[[bytes], bytes]
):
    dump = tmp_path / name
    dump.write_bytes(_flipped(compress(SNAPSHOT_XML.read_bytes())))
    with pytest.raises(SourceFormatError) as error:
        list(read_dump(dump))
    message = str(error.value)
    suffix = name.rsplit(".", 1)[-1]
    # the decompressor refuses the bad block itself, or the XML it let through breaks first:
    # which one depends on where the flipped bytes fall in the dump's blocks
    assert message.startswith(
        (f"{dump}: corrupt compressed file: its .{suffix} data fails",
         f"{dump}: truncated or corrupt .{suffix} data")
    )  # fmt: skip
    assert "malformed" not in message


def test_well_compressed_malformed_xml_is_still_called_malformed(tmp_path):
    dump = tmp_path / "broken.xml.gz"
    dump.write_bytes(gzip.compress(ROOT_TAG + PAGE.replace(b"</title>", b"")))
    with pytest.raises(SourceFormatError, match=r"broken\.xml\.gz: malformed XML at line \d+"):
        list(read_dump(dump))


def test_a_multistream_dump_declaring_entities_is_refused_naming_the_stream(tmp_path):
    header, _ = split_export(SNAPSHOT_XML)
    pages = [filler_page(100 + i, f"Filler {i}") for i in range(4)]
    index = tmp_path / "index.txt.bz2"
    first = tmp_path / "first-multistream.xml.bz2"
    bomb = (
        b'<?xml version="1.0"?>\n' + DOCTYPES["expansion"] + header[header.index(b"<mediawiki") :]
    )
    write_multistream(bomb, pages, first, index, per_stream=2)
    with pytest.raises(
        SourceFormatError,
        match=r"first-multistream\.xml\.bz2: the stream at byte 0: declares entities",
    ):
        list(candidate_pages(first, find_in_index(index, ["Filler 1"])))
    later = tmp_path / "later-multistream.xml.bz2"
    hostile = b'<?xml version="1.0"?>\n' + DOCTYPES["external"] + ROOT_TAG + pages[2] + pages[3]
    write_multistream(header, [*pages[:2], hostile], later, index, per_stream=2)
    with pytest.raises(SourceFormatError, match=r"the stream at byte [1-9]\d*: declares entities"):
        list(candidate_pages(later, find_in_index(index, ["Filler 2"])))
