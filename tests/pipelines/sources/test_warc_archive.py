"""Reading the WARC archive back: malformed records are errors naming the file and the URL."""

from __future__ import annotations

import json
import re
import zlib
from io import BytesIO

import pytest
from warcio.warcwriter import WARCWriter

from pipelines.errors import SourceFormatError
from pipelines.sources.fetch import FetchResult
from pipelines.sources.replay import load_index
from pipelines.sources.warc_archive import OUTCOME_TYPE, WarcArchive, read_archive

FIRST, BAD, LAST = (f"http://news.example/{name}" for name in ("first", "bad", "last"))


def _fetch(archive: WarcArchive, url: str) -> None:
    record_id = archive.write_exchange(
        url, [], "200 OK", [("Content-Type", "text/html")], b"<p>A fine page.</p>"
    )
    archive.write_outcome(url, FetchResult(url, "ok", "", response_record=record_id).outcome())


def _append(path, data: bytes) -> None:
    with path.open("ab") as stream:
        stream.write(data)


def _outcome_record(url: str, payload: bytes) -> bytes:
    out = BytesIO()
    writer = WARCWriter(out, gzip=True)
    record = writer.create_warc_record(
        url, "metadata", payload=BytesIO(payload), warc_content_type=OUTCOME_TYPE
    )
    writer.write_record(record)
    return out.getvalue()


def _archive_with(tmp_path, middle: bytes):
    """One file: a good fetch, ``middle``, then another outcome."""
    folder = tmp_path / "raw"
    archive = WarcArchive(folder)
    _fetch(archive, FIRST)
    archive.close()
    (path,) = folder.glob("*.warc.gz")
    _append(path, middle)
    last = FetchResult(LAST, "dead", "").outcome()
    _append(path, _outcome_record(LAST, json.dumps(last, default=str).encode()))
    return folder, path


def _names_bad(path, problem: str) -> str:
    """The error pattern: the WARC file, then the outcome record's URL, then the problem."""
    return (
        rf"{re.escape(str(path))}: cannot read the outcome record for {re.escape(BAD)}: .*{problem}"
    )


@pytest.mark.parametrize(
    ("payload", "problem"),
    [(b"{not json", "JSONDecodeError"), (b"[1, 2]", "a JSON list, not an object")],
)
def test_malformed_outcome_names_the_file_and_url(tmp_path, payload, problem):
    folder, path = _archive_with(tmp_path, _outcome_record(BAD, payload))
    with pytest.raises(SourceFormatError, match=_names_bad(path, problem)):
        list(read_archive(folder))
    with pytest.raises(SourceFormatError, match=_names_bad(path, problem)):
        load_index(folder)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"fetched_at": None}, "no 'fetched_at' field"),
        ({"fetched_at": "yesterday"}, "Invalid isoformat string: 'yesterday'"),
        ({"bogus": 1}, "unexpected keyword argument 'bogus'"),
    ],
)
def test_outcome_that_is_no_fetch_result_names_the_file_and_url(tmp_path, change, problem):
    outcome = {**FetchResult(BAD, "dead", "").outcome(), **change}
    outcome = {k: v for k, v in outcome.items() if v is not None}
    folder, path = _archive_with(
        tmp_path, _outcome_record(BAD, json.dumps(outcome, default=str).encode())
    )
    assert [url for url, _ in read_archive(folder)] == [FIRST, BAD, LAST]
    with pytest.raises(SourceFormatError, match=_names_bad(path, problem)):
        load_index(folder)


def test_garbage_between_records_names_the_file_and_the_record_before(tmp_path):
    folder, path = _archive_with(tmp_path, zlib.compress(b"not a WARC record\r\n\r\n", wbits=31))
    with pytest.raises(
        SourceFormatError,
        match=rf"{re.escape(str(path))}: cannot read the record after the outcome record for "
        rf"{re.escape(FIRST)}: ArchiveLoadFailed",
    ):
        load_index(folder)


def test_file_cut_inside_record_headers_keeps_its_complete_records(tmp_path, caplog):
    folder = tmp_path / "raw"
    archive = WarcArchive(folder)
    _fetch(archive, FIRST)
    archive.close()
    (path,) = folder.glob("*.warc.gz")
    packer = zlib.compressobj(wbits=31)  # a gzip member the killed run never finished
    _append(
        path,
        packer.compress(b"WARC/1.0\r\nWARC-Type: request\r\n") + packer.flush(zlib.Z_SYNC_FLUSH),
    )
    index = load_index(folder)
    assert set(index) == {FIRST} and "A fine page." in index[FIRST].text
    assert f"{path}: cut short in the record after the outcome record for {FIRST}" in caplog.text
