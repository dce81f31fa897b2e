"""Reading the WARC archive back: malformed records are errors naming the file and the URL."""

from __future__ import annotations

import json
import re
import zlib
from io import BytesIO

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from pipelines.errors import SourceFormatError
from pipelines.sources.web.fetch import FetchResult
from pipelines.sources.web.replay import load_index
from pipelines.sources.web.warc_archive import OUTCOME_TYPE, WarcArchive, read_archive

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


def _uris_by_file(folder) -> dict[str, list[str]]:
    """Each file's records, as ``<type> <target URI>``, in order."""
    out = {}
    for path in sorted(folder.glob("*.warc.gz")):
        with path.open("rb") as stream:
            out[path.name] = [
                f"{r.rec_type} {r.rec_headers.get_header('WARC-Target-URI')}"
                for r in ArchiveIterator(stream)
            ]
    return out


def test_rotation_never_splits_a_fetch(tmp_path):
    folder = tmp_path / "raw"
    archive = WarcArchive(folder, rotate_bytes=100)  # smaller than any record
    pages = {f"http://news.example/{n}": f"<p>Page {n}: {'word ' * n}</p>" for n in range(8)}
    for n, (url, page) in enumerate(pages.items()):
        if n % 3 == 1:  # a redirect hop first: two exchanges
            archive.write_exchange(url, [], "301 Moved", [("Location", f"{url}/to")], b"")
        record_id = archive.write_exchange(
            url, [], "200 OK", [("Content-Type", "text/html")], page.encode()
        )
        status = "dead" if n % 4 == 3 else "ok"
        outcome = FetchResult(url, status, "", charset="utf-8", response_record=record_id)
        archive.write_outcome(url, outcome.outcome())
    archive.close()

    files = _uris_by_file(folder)
    assert len(files) > 1
    for records in files.values():  # whole fetches: its exchanges, then its outcome
        url = records[-1].split()[1]
        exchanges = ["request", "response"] * (2 if url.endswith(("/1", "/4", "/7")) else 1)
        assert records == [f"{kind} {url}" for kind in exchanges] + [f"metadata {url}"]
    index = load_index(folder)
    assert set(index) == set(pages)
    for url, page in pages.items():
        assert index[url].text == (page if index[url].status == "ok" else "")


def test_exchange_without_outcome_is_not_fetched_and_a_resume_fetches_it(tmp_path):
    folder = tmp_path / "raw"
    archive = WarcArchive(folder)
    _fetch(archive, FIRST)
    archive.write_exchange(LAST, [], "200 OK", [("Content-Type", "text/html")], b"<p>Half.</p>")
    archive.close()  # killed before the outcome
    assert set(load_index(folder)) == {FIRST}
    resumed = WarcArchive(folder)
    _fetch(resumed, LAST)
    resumed.close()
    index = load_index(folder)
    assert set(index) == {FIRST, LAST} and "A fine page." in index[LAST].text


def test_ok_outcome_without_its_response_in_the_file_is_not_fetched(tmp_path, caplog):
    folder = tmp_path / "raw"
    archive = WarcArchive(folder)
    _fetch(archive, FIRST)
    record_id = archive.write_exchange(LAST, [], "200 OK", [], b"<p>Split.</p>")
    archive.close()  # as an older version rotated: the outcome in the next file
    outcome = FetchResult(LAST, "ok", "", response_record=record_id).outcome()
    _append(
        folder / "web-00001.warc.gz",
        _outcome_record(LAST, json.dumps(outcome, default=str).encode()),
    )
    assert set(load_index(folder)) == {FIRST}
    assert f"the outcome record for {LAST} has no response in this file" in caplog.text
