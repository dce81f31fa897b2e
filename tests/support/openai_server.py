"""A scripted OpenAI-compatible chat server on 127.0.0.1, for fault tests and the LLM benchmark.

``reply(body, n)`` decides each answer from the request body and the request's number (1-based):
return a string (the completion text, sent as a proper chat.completion object), a
:class:`Finished` (the text with another ``finish_reason``, such as ``length``) or a
``(status, headers, body)`` triple for errors. ``latency_s`` delays every answer. A ``gate``
sees each request as it arrives, before the latency: it returns a triple to refuse the request
at once (a rate limit's 429) or headers to send with the answer.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pipelines.snapshot.site_server import in_thread

Reply = Callable[[dict[str, Any], int], "str | Finished | tuple[int, dict[str, str], str]"]
Gate = Callable[[dict[str, Any]], "dict[str, str] | tuple[int, dict[str, str], str]"]


@dataclass(frozen=True)
class Finished:
    """A completion's text with the reason the model stopped (``length``: cut at max_tokens)."""

    text: str
    finish_reason: str


@dataclass
class ServerLog:
    """What the server saw: request bodies and headers, in order."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def count(self) -> int:
        return len(self.bodies)


def completion(text: str, body: dict[str, Any], finish_reason: str = "stop") -> dict[str, Any]:
    """A chat.completion object as the OpenAI API documents it."""
    prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "local"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_words,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt_words + len(text.split()),
        },
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 refuses bursts of concurrent clients


@contextmanager
def openai_server(
    reply: Reply, latency_s: float = 0.0, gate: Gate | None = None
) -> Iterator[tuple[str, ServerLog]]:
    """Serve ``/v1/chat/completions``; yield the base URL (ending in /v1) and the request log."""
    seen = ServerLog()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, payload: str, headers: dict[str, str]) -> None:
            data = payload.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with seen.lock:
                seen.bodies.append(body)
                seen.headers.append({k.lower(): v for k, v in self.headers.items()})
                n = seen.count
            if self.path != "/v1/chat/completions":
                return self._send(404, json.dumps({"error": {"message": "no such path"}}), {})
            extra = gate(body) if gate is not None else {}
            if isinstance(extra, tuple):
                return self._send(extra[0], extra[2], extra[1])
            if latency_s:
                time.sleep(latency_s)
            answer = reply(body, n)
            if isinstance(answer, str):
                return self._send(200, json.dumps(completion(answer, body)), extra)
            if isinstance(answer, Finished):
                done = completion(answer.text, body, answer.finish_reason)
                return self._send(200, json.dumps(done), extra)
            status, headers, payload = answer
            self._send(status, payload, headers)

    with in_thread(_Server(("127.0.0.1", 0), Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
