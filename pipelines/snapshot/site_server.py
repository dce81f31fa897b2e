"""Serve the snapshot's authored web pages over HTTPS on 127.0.0.1, under their own host names.

Pages live in ``site/<host>/<path>.html`` (other files, such as ``robots.txt`` or a ``.pdf``,
under their own names); the web archive stand-in answers under its own host
(:mod:`pipelines.snapshot.wayback`). ``traps`` makes chosen URLs misbehave: ``{status: 410}``
answers with that status, ``{delay_s: 10}`` stalls before answering, ``{location: URL}``
redirects there (302 unless ``status`` says otherwise), ``{body: TEXT}`` answers that text
(as ``content_type``, HTML by default).
"""

from __future__ import annotations

import mimetypes
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import TCPServer
from typing import Any
from urllib.parse import urlsplit

from pipelines.snapshot.wayback import ARCHIVE_HOST, Answer, Mementos


def page_file(site: Path, url: str) -> Path:
    """Where the page for ``url`` is authored (the file need not exist)."""
    parts = urlsplit(url)
    path = parts.path or "/"
    if path.endswith("/"):
        return site / parts.netloc / path.lstrip("/") / "index.html"
    exact = site / parts.netloc / path.lstrip("/")
    return (
        exact if exact.suffix and exact.suffix != ".html" else exact.with_name(exact.name + ".html")
    )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _SiteServer

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        host = (self.headers.get("Host") or "").split(":")[0].lower()
        url = f"https://{host}{self.path}"
        self.server.requests.append(url)
        trap = self.server.traps.get(url, {})
        if trap.get("delay_s") and self.server.closing.wait(float(trap["delay_s"])):
            return  # the server is closing: a stalled answer is not waited for
        if "location" in trap or "body" in trap:
            status, headers, body = _trapped(trap)
        elif host == ARCHIVE_HOST and self.path != "/robots.txt" and "status" not in trap:
            status, headers, body = self.server.mementos.answer(self.path)
        else:
            status, headers, body = self._page(url, int(trap.get("status", 200)))
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client gave up (a timeout trap)

    def _page(self, url: str, status: int) -> Answer:
        target = page_file(self.server.site, url)
        if status == 200 and not target.is_file():
            status = 404
        body = target.read_bytes() if status == 200 else f"{status}\n".encode()
        kind = mimetypes.guess_type(target.name)[0] if status == 200 else "text/plain"
        if kind == "text/html" or (status == 200 and target.suffix == ".html"):
            kind = "text/html; charset=utf-8"
        return status, {"Content-Type": kind or "application/octet-stream"}, body


def _trapped(trap: dict[str, Any]) -> Answer:
    """A trap's own answer: a redirect to ``location``, or ``body`` as ``content_type``."""
    if "location" in trap:
        return int(trap.get("status", 302)), {"Location": str(trap["location"])}, b""
    kind = str(trap.get("content_type", "text/html; charset=utf-8"))
    return int(trap.get("status", 200)), {"Content-Type": kind}, str(trap["body"]).encode()


class _SiteServer(ThreadingHTTPServer):
    daemon_threads = True
    site: Path
    traps: dict[str, dict[str, Any]]
    requests: list[str]
    mementos: Mementos
    closing: threading.Event
    """Set when the block ends, so that a stalling trap stops at once instead of holding the
    server's close (which joins every handler thread) for its whole delay."""


@contextmanager
def in_thread(server: TCPServer) -> Iterator[TCPServer]:
    """Serve ``server`` from a daemon thread; shut it down and close it on exit."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serve_site(
    site: Path,
    traps: dict[str, dict[str, Any]],
    cert: Path,
    key: Path,
    wayback: Path | None = None,
) -> Iterator[_SiteServer]:
    """Serve ``site`` over HTTPS at 127.0.0.1 on a free port until the block ends, and the
    archive stand-in's copies in ``wayback`` under its host (:mod:`.wayback`)."""
    server = _SiteServer(("127.0.0.1", 0), _Handler)
    server.site, server.traps, server.requests = site, traps, []
    server.mementos = Mementos(wayback) if wayback is not None else Mementos(site / "-")
    server.closing = threading.Event()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with in_thread(server):
        try:
            yield server
        finally:
            server.closing.set()
