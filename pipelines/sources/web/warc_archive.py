"""The raw web archive: every request, response and outcome in rotating ``.warc.gz`` files.

Each fetch writes its HTTP exchanges (request and response records, every hop and retry) and
closes with a ``metadata`` record holding the outcome (status, reason, final URL, headers that
matter) as JSON. An archived copy of a dead link is a fetch like any other, under its memento
URL, followed by a ``metadata`` record naming the original URL and the memento time. Replay
reads the outcome records back and, for successful fetches, the body of the final response, so
a replayed run sees exactly what the live run saw.
"""

from __future__ import annotations

import gzip
import json
import logging
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from textwrap import shorten
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pipelines.errors import SourceFormatError

OUTCOME_TYPE = "application/vnd.benchsmith.fetch-outcome+json"
MEMENTO_TYPE = "application/vnd.benchsmith.memento+json"
"""An archived copy's link to the page it copies (:meth:`WarcArchive.write_memento`)."""
CHUNK_BYTES = 1 << 20
READ_BLOCK = 4096
"""Compressed bytes warcio inflates at a time when reading: at deflate's 1032:1 ceiling about
4 MB, so a record that inflates to gigabytes costs some 16 MB of buffers while it is skipped
(warcio's default, 16 KiB, costs 65 MB)."""
log = logging.getLogger(__name__)


@dataclass
class _File:
    """One open ``.warc.gz`` file and the number of fetches bound to it."""

    stream: BinaryIO
    writer: WARCWriter
    fetches: int = 0


# the archive and file of the fetch in progress in this task (set by WarcArchive.fetch)
_BOUND: ContextVar[tuple[WarcArchive, _File] | None] = ContextVar("warc_fetch", default=None)


class WarcArchive:
    """Append-only writer of rotating ``<prefix>-NNNNN.warc.gz`` files in ``folder``.

    A new run starts a new file after the last one, so earlier files are never rewritten. All
    records of one fetch (its exchanges and its outcome) go to one file: the file is chosen,
    rotating when the current one has reached ``rotate_bytes``, as the fetch begins. A full
    file stays open until the fetches that began in it have ended, so concurrent fetches each
    keep their records together. A fetch begins with :meth:`fetch`; outside one, a fetch
    begins with its first exchange and ends with its outcome (one fetch at a time).
    """

    def __init__(self, folder: Path, prefix: str = "web", rotate_bytes: int = 100_000_000):
        self.folder = folder
        self.prefix = prefix
        self.rotate_bytes = rotate_bytes
        folder.mkdir(parents=True, exist_ok=True)
        existing = sorted(folder.glob(f"{prefix}-*.warc.gz"))
        self._index = int(existing[-1].name[len(prefix) + 1 : -8]) + 1 if existing else 0
        self._current: _File | None = None  # where fetches begin
        self._open: list[_File] = []  # the current file and full ones with fetches still on
        self._loose: _File | None = None  # the file of a fetch begun outside fetch()

    @contextmanager
    def fetch(self) -> Iterator[None]:
        """Bind one fetch, in this task, to one file: records written inside all go there."""
        file = self._begin()
        token = _BOUND.set((self, file))
        try:
            yield
        finally:
            _BOUND.reset(token)
            self._end(file)

    def _begin(self) -> _File:
        """The file for a fetch beginning now: the current one, or the next once it is full."""
        file = self._current
        if file is not None and file.stream.tell() >= self.rotate_bytes:
            self._current = None
            self._index += 1
            if file.fetches == 0:
                self._close(file)
        if self._current is None:
            path = self.folder / f"{self.prefix}-{self._index:05d}.warc.gz"
            stream = path.open("ab")
            self._current = _File(stream, WARCWriter(stream, gzip=True))
            self._open.append(self._current)
        self._current.fetches += 1
        return self._current

    def _end(self, file: _File) -> None:
        file.fetches -= 1
        if file.fetches == 0 and file is not self._current:
            self._close(file)

    def _close(self, file: _File) -> None:
        file.stream.close()
        if file in self._open:
            self._open.remove(file)

    def _bound(self) -> _File | None:
        bound = _BOUND.get()
        return bound[1] if bound is not None and bound[0] is self else None

    def write_exchange(
        self,
        url: str,
        request_headers: list[tuple[str, str]],
        status_line: str | None,
        response_headers: list[tuple[str, str]],
        body: bytes,
    ) -> str:
        """Write one request (and its response, when one came back); return the record id."""
        file = self._bound()
        if file is None:
            if self._loose is None:
                self._loose = self._begin()
            file = self._loose
        writer = file.writer
        head = StatusAndHeaders(f"GET {url} HTTP/1.1", request_headers, is_http_request=True)
        request = writer.create_warc_record(url, "request", payload=BytesIO(b""), http_headers=head)
        writer.write_record(request)
        record_id = request.rec_headers.get_header("WARC-Record-ID")
        if status_line is not None:
            response = writer.create_warc_record(
                url, "response", payload=BytesIO(body),
                http_headers=StatusAndHeaders(status_line, response_headers, protocol="HTTP/1.1"),
                warc_headers_dict={"WARC-Concurrent-To": record_id},
            )  # fmt: skip
            writer.write_record(response)
            record_id = response.rec_headers.get_header("WARC-Record-ID")
        file.stream.flush()
        return record_id

    def write_outcome(self, url: str, outcome: dict[str, Any]) -> None:
        """Close a fetch with its outcome record, in the file of its exchanges."""
        self._write_metadata(url, OUTCOME_TYPE, outcome)

    def write_memento(
        self, memento_url: str, original_url: str, memento_at: str, archive: str
    ) -> None:
        """Link an archived copy to the page it copies: a ``metadata`` record whose target is
        the memento URL (the URL its exchanges and outcome are kept under), with the original
        URL and the memento time (``WARC-Refers-To-Target-URI``, ``WARC-Refers-To-Date``: WARC
        1.1's names for the URI and date of the capture a record refers to) and the archive."""
        link = {"original_url": original_url, "memento_at": memento_at, "archive": archive}
        headers = {"WARC-Refers-To-Target-URI": original_url}
        if memento_at:
            headers["WARC-Refers-To-Date"] = memento_at
        self._write_metadata(memento_url, MEMENTO_TYPE, link, headers)

    def _write_metadata(
        self,
        url: str,
        content_type: str,
        content: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> None:
        """One JSON ``metadata`` record, in the file of the fetch under way (or on its own)."""
        file = self._bound()
        loose = file is None
        if file is None:
            file, self._loose = self._loose or self._begin(), None
        payload = json.dumps(content, sort_keys=True, default=str).encode()
        record = file.writer.create_warc_record(
            url, "metadata", payload=BytesIO(payload), warc_content_type=content_type,
            warc_headers_dict=headers,
        )  # fmt: skip
        file.writer.write_record(record)
        file.stream.flush()
        if loose:
            self._end(file)

    def close(self) -> None:
        """Finish every open file; a later fetch appends to the current one again."""
        for file in list(self._open):
            self._close(file)
        self._current = self._loose = None


@dataclass(frozen=True)
class Recorded:
    """A fetch as the archive remembers it: its outcome, the body if it succeeded, and the file."""

    outcome: dict[str, Any]
    body: bytes
    path: Path


def unreadable(path: Path, record: str, problem: str) -> SourceFormatError:
    """The error for a malformed record: names the WARC file and the record (its target URI)."""
    return SourceFormatError(f"{path}: cannot read {record}: {problem}")


class _Broken(Exception):
    """A record of one file cannot be read; ``record`` says which, the message why."""

    def __init__(self, record: str, problem: str):
        super().__init__(problem)
        self.record = record


# what warcio, gzip and json raise on a record cut short or malformed (AttributeError: warcio
# on WARC headers without a target URI)
_BROKEN = (ArchiveLoadFailed, AttributeError, EOFError, OSError, ValueError, zlib.error)


def read_archive(
    folder: Path, prefix: str = "web", max_body: int | None = None
) -> Iterator[tuple[str, Recorded]]:
    """Yield ``(url, Recorded)`` for every finished fetch in the archive, oldest first.

    A response body is read up to ``max_body + 1`` bytes (whole if None), so a record that
    inflates past the cap shows it without ever being held whole; the rest is skipped.

    A file cut short by a killed run yields its complete records and is then skipped with a
    warning; the fetches it lost are simply not in the archive, as is a fetch whose outcome was
    never written. An ``ok`` outcome without its response in the same file (written by a
    version that could rotate between the two) is left out too, with a warning, so a resume
    fetches it again. A malformed record anywhere else is a :class:`SourceFormatError` naming
    the file and the record's target URI.
    """
    for path in sorted(folder.glob(f"{prefix}-*.warc.gz")):
        try:
            yield from _read_file(path, None if max_body is None else max_body + 1)
        except _Broken as exc:
            if not _cut_short(path):
                raise unreadable(path, exc.record, str(exc)) from exc.__cause__
            log.warning(
                "%s: cut short in %s; its complete records are kept (%s)", path, exc.record, exc
            )


def _read_file(path: Path, limit: int | None) -> Iterator[tuple[str, Recorded]]:
    bodies: dict[str, bytes] = {}
    at = "the first record"
    try:
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream, block_size=READ_BLOCK):
                is_outcome = record.rec_type == "metadata" and record.content_type == OUTCOME_TYPE
                url = record.rec_headers.get_header("WARC-Target-URI")
                last = f"the {'outcome' if is_outcome else record.rec_type} record for {url}"
                at = last
                if record.rec_type == "response":
                    record_id = record.rec_headers.get_header("WARC-Record-ID")
                    bodies[record_id] = record.raw_stream.read(limit)  # as sent, still encoded
                elif is_outcome:
                    outcome = _outcome(record.content_stream().read())
                    response = outcome.get("response_record", "")
                    if outcome.get("status") == "ok" and response not in bodies:
                        log.warning("%s: %s has no response in this file; not fetched", path, last)
                    else:
                        yield url, Recorded(outcome, bodies.get(response, b""), path)
                at = f"the record after {last}"
    except _BROKEN as exc:
        raise _Broken(at, shorten(f"{type(exc).__name__}: {exc}", 300)) from exc


def _outcome(payload: bytes) -> dict[str, Any]:
    outcome = json.loads(payload)
    if not isinstance(outcome, dict):
        raise ValueError(f"outcome is a JSON {type(outcome).__name__}, not an object")
    return outcome


def _cut_short(path: Path) -> bool:
    """Whether ``path`` ends inside a gzip member, as a file a killed run was writing does."""
    try:
        with gzip.open(path, "rb") as stream:
            while stream.read(CHUNK_BYTES):
                pass
    except EOFError:
        return True
    except (OSError, zlib.error):  # corrupt, not merely cut short
        pass
    return False
