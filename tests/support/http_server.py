"""A scripted HTTP server on 127.0.0.1: each request gets the next canned answer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from pipelines.snapshot.site_server import in_thread


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
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    with in_thread(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
