"""A local stand-in for OpenAI's Files and Batches endpoints on 127.0.0.1, with chat completions.

It serves what the batch mode uses, as the API reference documents it: ``POST /v1/files``
(multipart), ``GET /v1/files/{id}`` and ``/content``, ``POST /v1/batches``, ``GET
/v1/batches/{id}``, ``GET /v1/batches`` (newest first, ``limit`` and ``after``) and ``POST
/v1/batches/{id}/cancel``, plus ``POST /v1/chat/completions`` for the sync path. Batch lines and
chat calls are answered by the same ``reply(body, n)`` as :mod:`tests.support.openai_server`
(``n`` counts answers across both): a string is a 200 line in the output file, a ``(status,
headers, body)`` triple a non-200 line in the error file. :class:`BatchScript` scripts the rest.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pipelines.snapshot.site_server import in_thread
from tests.support.openai_server import Reply, completion

TERMINAL = ("completed", "failed", "expired", "cancelled")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


@dataclass
class BatchScript:
    """Scripted behaviours, by batch number (1-based, in order of creation)."""

    in_progress_polls: int = 0
    """Polls each batch answers ``in_progress`` before it finishes."""
    expire_after: dict[int, int] = field(default_factory=dict)
    """Batch number to the lines it answers before it expires (the rest go to the error file
    as ``batch_expired`` lines)."""
    fail_line: Callable[[dict[str, Any]], str | None] | None = None
    """A message for a line's body puts that line in the error file with an ``error`` object."""
    final_status: dict[int, str] = field(default_factory=dict)
    """Batch number to ``failed`` or ``cancelled``: it ends so, answering nothing."""
    stray_ids: dict[int, list[str]] = field(default_factory=dict)
    """Batch number to ``custom_id``s it was never given, answered in its output all the same
    (a provider's mix-up, or a file edited by hand)."""
    refuse: Callable[[str, str, dict[str, str]], tuple[int, dict[str, str], str] | None] | None = (
        None
    )
    """Called with each request's method, path and headers before it is served: a ``(status,
    headers, body)`` answer replaces the endpoint's own (a refused key, a busy server)."""


@dataclass
class BatchLog:
    """What the stand-in saw."""

    created: list[dict[str, Any]] = field(default_factory=list)
    """``POST /v1/batches`` bodies, in order."""
    inputs: list[list[dict[str, Any]]] = field(default_factory=list)
    """Each created batch's input lines."""
    batch_ids: list[str] = field(default_factory=list)
    """Each created batch's id."""
    polls: int = 0
    lists: int = 0
    chat_bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _State:
    """Files and batches, and how each batch ends."""

    def __init__(self, reply: Reply, script: BatchScript, seen: BatchLog):
        self.reply, self.script, self.seen = reply, script, seen
        self.files: dict[str, tuple[bytes, dict[str, Any]]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.polls: dict[str, int] = {}
        self.ids = itertools.count(1)
        self.answers = itertools.count(1)
        self.lock = threading.Lock()

    def add_file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = f"file-{next(self.ids)}"
        meta = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        self.files[file_id] = (data, meta)
        return meta

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        data, _ = self.files[body["input_file_id"]]
        lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        self.seen.created.append(body)
        self.seen.inputs.append(lines)
        batch_id = f"batch_{next(self.ids)}"
        self.seen.batch_ids.append(batch_id)
        self.batches[batch_id] = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body["endpoint"],
            "input_file_id": body["input_file_id"],
            "completion_window": body["completion_window"],
            "status": "validating",
            "created_at": int(time.time()),
            "metadata": body.get("metadata"),
            "output_file_id": None,
            "error_file_id": None,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "_number": len(self.seen.created),
        }
        self.polls[batch_id] = 0
        return self.batches[batch_id]

    def poll(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        self.polls[batch_id] += 1
        if batch["status"] == "cancelling":
            batch["status"] = "cancelled"
        elif batch["status"] in ("validating", "in_progress"):
            if self.polls[batch_id] <= self.script.in_progress_polls:
                batch["status"] = "in_progress"
            else:
                self._finish(batch)
        return batch

    def _finish(self, batch: dict[str, Any]) -> None:
        number = batch["_number"]
        forced = self.script.final_status.get(number)
        if forced is not None:
            batch["status"] = forced
            batch["errors"] = {
                "object": "list",
                "data": [{"code": "scripted", "message": f"batch {number} {forced} on purpose"}],
            }
            return
        lines = self.seen.inputs[number - 1]
        answered = self.script.expire_after.get(number, len(lines))
        output, errors = [], []
        for line in lines[:answered]:
            item = self._answer(line)
            ok = item["response"] is not None and item["response"]["status_code"] == 200
            (output if ok else errors).append(item)
        failed = len(errors)
        for key in self.script.stray_ids.get(number, []):
            output.append(self._answer({**lines[0], "custom_id": key}))
        for line in lines[answered:]:  # the API lists the requests an expiry cut off so
            cut_off = {"code": "batch_expired", "message": "not run within the window"}
            errors.append({"custom_id": line["custom_id"], "response": None, "error": cut_off})
        batch["output_file_id"] = self._jsonl(output, "output") if output else None
        batch["error_file_id"] = self._jsonl(errors, "errors") if errors else None
        batch["request_counts"] = {
            "total": len(lines),
            "completed": len(output),
            "failed": failed,
        }
        batch["status"] = "expired" if number in self.script.expire_after else "completed"

    def _answer(self, line: dict[str, Any]) -> dict[str, Any]:
        body, key = line["body"], line["custom_id"]
        request_id = f"req_{next(self.ids)}"
        message = self.script.fail_line(body) if self.script.fail_line else None
        if message is not None:
            error = {"code": "scripted_failure", "message": message}
            return {"id": request_id, "custom_id": key, "response": None, "error": error}
        answer = self.reply(body, next(self.answers))
        if isinstance(answer, str):
            response = {"status_code": 200, "request_id": request_id}
            response["body"] = completion(answer, body)
        else:
            status, _, payload = answer
            response = {"status_code": status, "request_id": request_id}
            response["body"] = json.loads(payload)
        return {"id": request_id, "custom_id": key, "response": response, "error": None}

    def _jsonl(self, items: list[dict[str, Any]], kind: str) -> str:
        data = "".join(json.dumps(item) + "\n" for item in items).encode()
        return self.add_file(data, f"{kind}.jsonl", f"batch_{kind}")["id"]


def public(batch: dict[str, Any]) -> dict[str, Any]:
    """A batch object as the API shows it."""
    return {k: v for k, v in batch.items() if not k.startswith("_")}


@contextmanager
def batch_server(reply: Reply, script: BatchScript | None = None) -> Iterator[tuple[str, BatchLog]]:
    """Serve the stand-in; yield its base URL (ending in /v1) and what it saw."""
    seen = BatchLog()
    state = _State(reply, script or BatchScript(), seen)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are separate writes

        def log_message(self, *args: object) -> None:
            pass

        def _send(
            self,
            status: int,
            payload: Any,
            ctype: str = "application/json",
            headers: dict[str, str] | None = None,
        ) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _missing(self) -> None:
            self._send(404, {"error": {"message": f"no such object: {self.path}"}})

        def _body(self) -> bytes:
            with seen.lock:
                seen.headers.append({k.lower(): v for k, v in self.headers.items()})
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))

        def _refused(self, method: str) -> bool:
            """Whether the script answered this request instead of the endpoint."""
            if state.script.refuse is None:
                return False
            headers = {k.lower(): v for k, v in self.headers.items()}
            answer = state.script.refuse(method, urlsplit(self.path).path, headers)
            if answer is None:
                return False
            status, extra, body = answer
            self._send(status, body.encode(), headers=extra)
            return True

        def do_POST(self) -> None:
            raw = self._body()
            if self._refused("POST"):
                return
            path = urlsplit(self.path).path
            if path == "/v1/chat/completions":
                return self._chat(json.loads(raw))
            with state.lock:
                if path == "/v1/files":
                    return self._send(200, self._upload(raw))
                if path == "/v1/batches":
                    return self._send(200, public(state.create(json.loads(raw))))
                match = re.fullmatch(r"/v1/batches/([^/]+)/cancel", path)
                if match and match[1] in state.batches:
                    batch = state.batches[match[1]]
                    if batch["status"] not in TERMINAL:
                        batch["status"] = "cancelling"
                    return self._send(200, public(batch))
            self._missing()

        def _chat(self, body: dict[str, Any]) -> None:
            with state.lock:
                seen.chat_bodies.append(body)
                n = next(state.answers)
            answer = state.reply(body, n)
            if isinstance(answer, str):
                return self._send(200, completion(answer, body))
            status, _, payload = answer
            self._send(status, payload.encode())

        def _upload(self, raw: bytes) -> dict[str, Any]:
            head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
            message = BytesParser(policy=email_policy).parsebytes(head + raw)
            fields: dict[str, Any] = {}
            filename = "upload"
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                fields[name] = part.get_payload(decode=True)
                filename = part.get_filename() or filename
            return state.add_file(fields["file"], filename, fields["purpose"].decode())

        def do_GET(self) -> None:
            self._body()
            if self._refused("GET"):
                return
            url = urlsplit(self.path)
            with state.lock:
                if url.path == "/v1/batches":
                    seen.lists += 1
                    return self._send(200, self._list(parse_qs(url.query)))
                if match := re.fullmatch(r"/v1/batches/([^/]+)", url.path):
                    if match[1] not in state.batches:
                        return self._missing()
                    seen.polls += 1
                    return self._send(200, public(state.poll(match[1])))
                if match := re.fullmatch(r"/v1/files/([^/]+)(/content)?", url.path):
                    if match[1] not in state.files:
                        return self._missing()
                    data, meta = state.files[match[1]]
                    if match[2]:
                        return self._send(200, data, "application/octet-stream")
                    return self._send(200, meta)
            self._missing()

        def _list(self, query: dict[str, list[str]]) -> dict[str, Any]:
            newest = [public(b) for b in reversed(state.batches.values())]
            if "after" in query:
                ids = [b["id"] for b in newest]
                newest = newest[ids.index(query["after"][0]) + 1 :]
            limit = int(query.get("limit", ["20"])[0])
            page = newest[:limit]
            return {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": len(newest) > limit,
            }

    with in_thread(_Server(("127.0.0.1", 0), Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
