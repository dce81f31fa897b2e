"""The raw web archive: every request, response and outcome in rotating ``.warc.gz`` files.

Each fetch writes its HTTP exchanges (request and response records, every hop and retry) and
closes with a ``metadata`` record holding the outcome (status, reason, final URL, headers that
matter) as JSON. Replay reads the outcome records back and, for successful fetches, the body of
the final response, so a replayed run sees exactly what the live run saw.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

OUTCOME_TYPE = "application/vnd.benchsmith.fetch-outcome+json"
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
    """A fetch as the archive remembers it: its outcome and, if it succeeded, the body."""

    outcome: dict[str, Any]
    body: bytes


def read_archive(folder: Path, prefix: str = "web") -> Iterator[tuple[str, Recorded]]:
    """Yield ``(url, Recorded)`` for every finished fetch in the archive, oldest first.

    A file cut short by a killed run yields its complete records and is then skipped with a
    warning; the fetches it lost are simply not in the archive.
    """
    for path in sorted(folder.glob(f"{prefix}-*.warc.gz")):
        try:
            yield from _read_file(path)
        except (OSError, EOFError, ValueError) as exc:
            log.warning("%s: unreadable after its last complete record (%s)", path, exc)


def _read_file(path: Path) -> Iterator[tuple[str, Recorded]]:
    bodies: dict[str, bytes] = {}
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream):
            kind = record.rec_type
            if kind == "response":
                record_id = record.rec_headers.get_header("WARC-Record-ID")
                bodies[record_id] = record.raw_stream.read()  # as sent, still encoded
            elif kind == "metadata" and record.content_type == OUTCOME_TYPE:
                outcome = json.loads(record.content_stream().read())
                body = bodies.get(outcome.get("response_record", ""), b"")
                yield record.rec_headers.get_header("WARC-Target-URI"), Recorded(outcome, body)
