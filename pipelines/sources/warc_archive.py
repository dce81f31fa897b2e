"""The raw web archive: every request, response and outcome in rotating ``.warc.gz`` files.

Each fetch writes its HTTP exchanges (request and response records, every hop and retry) and
closes with a ``metadata`` record holding the outcome (status, reason, final URL, headers that
matter) as JSON. Replay reads the outcome records back and, for successful fetches, the body of
the final response, so a replayed run sees exactly what the live run saw.
"""

from __future__ import annotations

import gzip
import json
import logging
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from textwrap import shorten
from typing import Any

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pipelines.errors import SourceFormatError

OUTCOME_TYPE = "application/vnd.benchsmith.fetch-outcome+json"
CHUNK_BYTES = 1 << 20
log = logging.getLogger(__name__)


class WarcArchive:
    """Append-only writer of rotating ``<prefix>-NNNNN.warc.gz`` files in ``folder``.

    A new run starts a new file after the last one, so earlier files are never rewritten.
    """

    def __init__(self, folder: Path, prefix: str = "web", rotate_bytes: int = 100_000_000):
        self.folder = folder
        self.prefix = prefix
        self.rotate_bytes = rotate_bytes
        folder.mkdir(parents=True, exist_ok=True)
        existing = sorted(folder.glob(f"{prefix}-*.warc.gz"))
        self._index = int(existing[-1].name[len(prefix) + 1 : -8]) + 1 if existing else 0
        self._file: Any = None
        self._writer: WARCWriter | None = None

    def _ensure_file(self) -> WARCWriter:
        if self._file is not None and self._file.tell() >= self.rotate_bytes:
            self.close()
            self._index += 1
        if self._writer is None:
            path = self.folder / f"{self.prefix}-{self._index:05d}.warc.gz"
            self._file = path.open("ab")
            self._writer = WARCWriter(self._file, gzip=True)
        return self._writer

    def write_exchange(
        self,
        url: str,
        request_headers: list[tuple[str, str]],
        status_line: str | None,
        response_headers: list[tuple[str, str]],
        body: bytes,
    ) -> str:
        """Write one request (and its response, when one came back); return the record id."""
        writer = self._ensure_file()
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
        self._file.flush()
        return record_id

    def write_outcome(self, url: str, outcome: dict[str, Any]) -> None:
        """Close a fetch with its outcome record."""
        writer = self._ensure_file()
        payload = json.dumps(outcome, sort_keys=True, default=str).encode()
        record = writer.create_warc_record(
            url, "metadata", payload=BytesIO(payload), warc_content_type=OUTCOME_TYPE
        )
        writer.write_record(record)
        self._file.flush()

    def close(self) -> None:
        """Finish the current file."""
        if self._file is not None:
            self._file.close()
        self._file = None
        self._writer = None


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


def read_archive(folder: Path, prefix: str = "web") -> Iterator[tuple[str, Recorded]]:
    """Yield ``(url, Recorded)`` for every finished fetch in the archive, oldest first.

    A file cut short by a killed run yields its complete records and is then skipped with a
    warning; the fetches it lost are simply not in the archive. A malformed record anywhere
    else is a :class:`SourceFormatError` naming the file and the record's target URI.
    """
    for path in sorted(folder.glob(f"{prefix}-*.warc.gz")):
        try:
            yield from _read_file(path)
        except _Broken as exc:
            if not _cut_short(path):
                raise unreadable(path, exc.record, str(exc)) from exc.__cause__
            log.warning(
                "%s: cut short in %s; its complete records are kept (%s)", path, exc.record, exc
            )


def _read_file(path: Path) -> Iterator[tuple[str, Recorded]]:
    bodies: dict[str, bytes] = {}
    at = "the first record"
    try:
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                is_outcome = record.rec_type == "metadata" and record.content_type == OUTCOME_TYPE
                url = record.rec_headers.get_header("WARC-Target-URI")
                last = f"the {'outcome' if is_outcome else record.rec_type} record for {url}"
                at = last
                if record.rec_type == "response":
                    record_id = record.rec_headers.get_header("WARC-Record-ID")
                    bodies[record_id] = record.raw_stream.read()  # as sent, still encoded
                elif is_outcome:
                    outcome = _outcome(record.content_stream().read())
                    body = bodies.get(outcome.get("response_record", ""), b"")
                    yield url, Recorded(outcome, body, path)
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
