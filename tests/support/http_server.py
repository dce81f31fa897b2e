"""A scripted HTTP server on 127.0.0.1: each request gets the next canned answer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from pipelines.snapshot.site_server import in_thread


def reply(
    handler: BaseHTTPRequestHandler,
    status: int,
    data: bytes,
    content_type: str,
    headers: dict[str, str] | None = None,
) -> None:
    """Send one whole answer: status, content type, ``headers``, length and body."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@contextmanager
def scripted_server(
    answers: list[tuple[int, str, str]],
) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """Serve ``(status, content_type, body)`` answers in order; yield base URL and request log.

    The last answer repeats once the script runs out. Each logged request holds its path and
    User-Agent.
    """
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append({"path": self.path, "user_agent": self.headers.get("User-Agent", "")})
            status, ctype, body = answers[min(len(seen), len(answers)) - 1]
            reply(self, status, body.encode(), ctype)

        def log_message(self, *args: object) -> None:
            pass

    with in_thread(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
