"""A local HTTP server on 127.0.0.1 whose paths misbehave on purpose, for the fetcher's tests."""

from __future__ import annotations

import codecs
import gzip
import random
import struct
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from pipelines.snapshot.site_server import in_thread

PAGE = (
    b"<!DOCTYPE html><html><head><title>Fine</title></head><body><p>A fine page.</p></body></html>"
)
ROBOTS = b"User-agent: benchsmith\nDisallow: /private/\n"
DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"
# UTF-8 with one stray Latin-1 byte (a lone \xe9, never valid UTF-8) among well-encoded words
STRAY_BYTE_PAGE = (
    "<html><head><title>Caf\u00e9</title></head><body><p>Le caf\u00e9 na\u00efve de "
    "Z\u00fcrich.</p><p>Stray: ".encode()
    + b"\xe9"
    + "</p><p>\u0160koda \u2013 \u00e9t\u00e9</p></body></html>".encode()
)


def article(subject: str) -> bytes:
    """A page long enough to be extracted as ``ok``, its text about ``subject``."""
    paragraphs = "".join(
        f"<p>Paragraph {n}: the {subject} rose through the night and the town council opened "
        "three shelters for the families who left the lower streets before it reached them.</p>"
        for n in range(6)
    )
    return (
        f"<!DOCTYPE html><html><head><title>{subject} report</title></head><body><article>"
        f"<h1>{subject} report</h1>{paragraphs}</article></body></html>"
    ).encode()


ARTICLE = article("river")


def png(width: int = 64, height: int = 64) -> bytes:
    """A real PNG image (RGB noise, so it hardly compresses): what a misconfigured server sends
    as ``text/html``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + random.Random(y).randbytes(width * 3) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = png()
FAR_FUTURE = "Fri, 01 Jan 2100 00:00:00 GMT"


def _flip(data: bytes, at: int) -> bytes:
    """``data`` with the byte at ``at`` inverted: a body corrupted on the way."""
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in {"Content-Type": "text/html; charset=utf-8", **(headers or {})}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_short(self, body: bytes, headers: dict[str, str] | None = None) -> None:
        """Announce ``body`` in Content-Length but send only its first half, then hang up."""
        self.send_response(200)
        for key, value in {"Content-Type": "text/html; charset=utf-8", **(headers or {})}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        self.close_connection = True

    def do_GET(self) -> None:
        self.server.requests.append((self.path, self.headers.get("User-Agent", "")))
        path = self.path
        hits = sum(1 for p, _ in self.server.requests if p == path)
        if path == "/robots.txt":
            return self._robots()
        if path == "/rules/robots.txt":
            return self._send(200, ROBOTS, {"Content-Type": "text/plain"})
        if path.startswith("/rules/hop-"):
            step = int(path.rsplit("-", 1)[1])
            return self._send(302, b"", {"Location": f"/rules/hop-{step + 1}"})
        if path in ("/ok", "/private/page"):
            return self._send(200, PAGE)
        if path == "/gone":
            return self._send(410, b"gone")
        if path == "/broken":
            return self._send(500, b"broken")
        if path == "/unavailable":
            return self._send(503, b"down", {"Retry-After": "0"})
        if path == "/throttled":
            if hits == 1:
                return self._send(429, b"slow down", {"Retry-After": "2"})
            return self._send(200, PAGE)
        if path == "/flaky":
            return self._send(503, b"down") if hits == 1 else self._send(200, PAGE)
        if path == "/slow":
            time.sleep(3)
            return self._send(200, PAGE)
        if path == "/endless":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"<p>more</p>" * 1000)
            except OSError:
                return None
        if path == "/bomb":
            bomb = gzip.compress(b"<p>" + b"a" * 50_000_000 + b"</p>")
            return self._send(200, bomb, {"Content-Encoding": "gzip"})
        if path == "/gzipped":
            return self._send(200, gzip.compress(PAGE), {"Content-Encoding": "gzip"})
        if path == "/loop-a":
            return self._send(302, b"", {"Location": "/loop-b"})
        if path == "/loop-b":
            return self._send(302, b"", {"Location": "/loop-a"})
        if path == "/hop":
            return self._send(301, b"", {"Location": "/ok"})
        if path.startswith("/to-private"):
            return self._send(302, b"", {"Location": self.server.private_url})
        if path == "/png-as-html":  # an image labelled as a page
            return self._send(200, PNG, {"Content-Type": "text/html; charset=utf-8"})
        if path == "/pdf-as-html":
            return self._send(200, b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n")
        if path == "/utf16-page":  # text with NUL bytes: UTF-16 with its byte-order mark
            body = codecs.BOM_UTF16_LE + ARTICLE.decode().encode("utf-16-le")
            return self._send(200, body, {"Content-Type": "text/html; charset=utf-16"})
        if path == "/report.pdf":
            return self._send(200, b"%PDF-1.4 ...", {"Content-Type": "application/pdf"})
        if path == "/latin1":
            body = (
                '<html><head><meta charset="iso-8859-1"></head>'
                "<body><p>Caf\u00e9 na\u00efve</p></body></html>"
            ).encode("latin-1")
            return self._send(200, body, {"Content-Type": "text/html; charset=bogus-8"})
        if path == "/corrupt-gzip":
            return self._send(200, b"not gzip at all", {"Content-Encoding": "gzip"})
        if path == "/corrupt-gzip-data":  # a real gzip stream, one byte flipped mid-way
            body = _flip(gzip.compress(ARTICLE), 40)
            return self._send(200, body, {"Content-Encoding": "gzip"})
        if path == "/truncated-gzip":  # a complete response holding half a gzip stream
            body = gzip.compress(ARTICLE)
            return self._send(200, body[: len(body) // 2], {"Content-Encoding": "gzip"})
        if path == "/corrupt-deflate":  # a zlib stream, one byte flipped mid-way
            body = _flip(zlib.compress(ARTICLE), 40)
            return self._send(200, body, {"Content-Encoding": "deflate"})
        if path == "/truncated-deflate":
            body = zlib.compress(ARTICLE)
            return self._send(200, body[: len(body) // 2], {"Content-Encoding": "deflate"})
        if path == "/brotli":  # never asked for, and no decoder installed
            return self._send(200, b"\x1b\x00\x00", {"Content-Encoding": "br"})
        if path == "/short-body":
            return self._send_short(ARTICLE)
        if path == "/short-gzip":
            return self._send_short(gzip.compress(ARTICLE), {"Content-Encoding": "gzip"})
        if path == "/utf8-stray-byte":
            return self._send(200, STRAY_BYTE_PAGE)
        if path == "/meta-utf8-stray-byte":
            body = STRAY_BYTE_PAGE.replace(b"<head>", b'<head><meta charset="utf-8">')
            return self._send(200, body, {"Content-Type": "text/html"})
        if path == "/unknown-charset":
            body = "<p>Le caf\u00e9 na\u00efve</p>".encode()
            return self._send(200, body, {"Content-Type": "text/html; charset=x-klingon"})
        if path == "/rate-limited":
            return self._send(429, b"slow down", {"Retry-After": "86400"})
        if path == "/always-429":  # a short Retry-After, every time
            return self._send(429, b"slow down", {"Retry-After": "1"})
        if path == "/rate-limited-503":
            return self._send(503, b"come back next century", {"Retry-After": FAR_FUTURE})
        if path == "/rate-limited-once":  # a day's wait asked for, then the page
            if hits == 1:
                return self._send(429, b"slow down", {"Retry-After": "86400"})
            return self._send(200, article("flood water"))
        if path == "/article":
            return self._send(200, ARTICLE)
        if path == "/base64-charset":
            return self._send(200, PAGE, {"Content-Type": "text/html; charset=base64"})
        if path == "/bad-location":
            return self._send(302, b"", {"Location": "http://[bad/"})
        return self._send(404, b"not found")

    def _robots(self) -> None:
        """robots.txt; on hosts named after a fault (``gzip-robots.example``) it misbehaves."""
        plain = {"Content-Type": "text/plain"}
        host = self.headers.get("Host", "").split(".")[0]
        if host == "gzip-robots":
            body = gzip.compress(DISALLOW_ALL)
            return self._send(200, body, {**plain, "Content-Encoding": "gzip"})
        if host == "corrupt-robots":
            body = b"User-agent: *\nDisallow:\n"  # allows all, if it were not labelled gzip
            return self._send(200, body, {**plain, "Content-Encoding": "gzip"})
        if host == "moved-robots":
            return self._send(301, b"", {"Location": "/rules/robots.txt"})
        if host == "endless-robots":
            return self._send(302, b"", {"Location": "/rules/hop-1"})
        if host == "private-robots":
            return self._send(302, b"", {"Location": self.server.private_url})
        return self._send(200, ROBOTS, plain)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[tuple[str, str]]
    private_url: str = ""


@contextmanager
def fault_server(host: str = "127.0.0.1") -> Iterator[_Server]:
    """Run the server on ``host`` at a free port; ``server.requests`` logs (path, User-Agent)."""
    server = _Server((host, 0), _Handler)
    server.requests = []
    with in_thread(server):
        yield server
