"""A local stand-in for Anthropic's Messages and Message Batches endpoints on 127.0.0.1.

It serves what the ``anthropic`` backend and its batch mode use, as the API reference documents
them (platform.claude.com/docs/en/api/messages/create and /docs/en/api/messages/batches: create,
retrieve, list, results, cancel; read 2026-11-28): ``POST /v1/messages``; ``POST
/v1/messages/batches`` (``{"requests": [{"custom_id", "params"}]}``, each ``custom_id`` matching
``^[a-zA-Z0-9_-]{1,64}$`` and unique, else HTTP 400); ``GET /v1/messages/batches/{id}``
(``processing_status`` ``in_progress``, ``canceling`` or ``ended``; ``request_counts`` stay at
``processing`` until the batch ends); ``GET /v1/messages/batches`` (newest first, ``limit``,
``after_id``); ``GET /v1/messages/batches/{id}/results`` (JSONL once ended: ``{"custom_id",
"result": {"type": "succeeded" | "errored" | "canceled" | "expired", ...}}``); ``POST
/v1/messages/batches/{id}/cancel``.

Answers come from the same ``reply(body, n)`` as :mod:`tests.support.openai_server` (``n``
counts answers across calls and batches): a string is a message that ended its turn, a
:class:`~tests.support.openai_server.Finished` a message with that ``stop_reason`` (such as
``max_tokens`` or ``refusal``), a ``(status, headers, body)`` triple an error (an ``errored``
result in a batch). :class:`~tests.support.batch_server.BatchScript` scripts the batches as for
the OpenAI stand-in: polls in progress, expiry after some answers, errored results
(``fail_line``), a batch cancelled (``final_status``), ids it was never given (``stray_ids``),
and refused requests (``refuse``); :class:`~tests.support.batch_server.BatchLog` records what it
saw (``inputs`` holds each batch's requests; ``chat_bodies`` the synchronous calls' bodies).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pipelines.snapshot.site_server import in_thread
from tests.support.batch_server import BatchLog, BatchScript
from tests.support.openai_server import Finished, Reply

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
"""The error types the API reference lists, by HTTP status."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def message(text: str, body: dict[str, Any], stop_reason: str = "end_turn") -> dict[str, Any]:
    """A Message object as the API documents it, usage counted in words."""
    prompt = [body.get("system", "")] + [str(m.get("content", "")) for m in body["messages"]]
    return {
        "id": "msg_local",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "local"),
        "content": [{"type": "text", "text": text}] if text else [],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": sum(len(p.split()) for p in prompt),
            "output_tokens": len(text.split()),
        },
    }


def error_body(status: int, payload: str) -> dict[str, Any]:
    """An error in the API's shape (``{"type": "error", "error": {"type", "message"}}``); a
    scripted body of another shape becomes its message."""
    try:
        given = json.loads(payload)
    except ValueError:
        given = payload
    if isinstance(given, dict) and given.get("type") == "error":
        return given
    inner = given.get("error") if isinstance(given, dict) else None
    text = inner.get("message") if isinstance(inner, dict) else None
    kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": text or str(given)}}


def sent_key(headers: dict[str, str]) -> str:
    """The key a request carried: ``x-api-key`` as the API reference shows it, or the
    ``Authorization: Bearer`` header the SDK (2.10) sends it in."""
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def _stamp(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


class _State:
    """Batches, and how each one ends."""

    def __init__(self, reply: Reply, script: BatchScript, seen: BatchLog):
        self.reply, self.script, self.seen = reply, script, seen
        self.batches: dict[str, dict[str, Any]] = {}
        self.results: dict[str, list[dict[str, Any]]] = {}
        self.polls: dict[str, int] = {}
        self.ids = itertools.count(1)
        self.answers = itertools.count(1)
        self.lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        """A synchronous call's status, headers and body."""
        answer = self.reply(body, next(self.answers))
        if isinstance(answer, str):
            return 200, {}, message(answer, body)
        if isinstance(answer, Finished):
            return 200, {}, message(answer.text, body, answer.finish_reason)
        status, headers, payload = answer
        return status, headers, error_body(status, payload)

    def create(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        requests = body.get("requests") or []
        ids = [r.get("custom_id") for r in requests]
        bad = [i for i in ids if not isinstance(i, str) or not CUSTOM_ID.match(i)]
        if not requests or bad or len(set(ids)) != len(ids):
            why = f"custom_id must match {CUSTOM_ID.pattern} and be unique: {bad[:3] or ids[:3]}"
            return 400, error_body(400, json.dumps({"error": {"message": why}}))
        self.seen.created.append(body)
        self.seen.inputs.append(requests)
        batch_id = f"msgbatch_{next(self.ids):04d}"
        self.seen.batch_ids.append(batch_id)
        now = datetime.now(UTC)
        self.batches[batch_id] = {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "in_progress",
            "request_counts": _counts(processing=len(requests)),
            "created_at": _stamp(now),
            "expires_at": _stamp(now + timedelta(hours=24)),
            "ended_at": None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": None,
            "_number": len(self.seen.created),
        }
        self.polls[batch_id] = 0
        return 200, self.batches[batch_id]

    def poll(self, batch_id: str, host: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        self.polls[batch_id] += 1
        if batch["processing_status"] == "canceling":
            self._end(batch, host, answered=0)
        elif batch["processing_status"] == "in_progress" and (
            self.polls[batch_id] > self.script.in_progress_polls
        ):
            if self.script.final_status.get(batch["_number"]) in ("failed", "cancelled"):
                batch["cancel_initiated_at"] = _stamp(datetime.now(UTC))
                self._end(batch, host, answered=0)
            else:
                lines = len(self.seen.inputs[batch["_number"] - 1])
                self._end(batch, host, self.script.expire_after.get(batch["_number"], lines))
        return batch

    def cancel(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        if batch["processing_status"] == "in_progress":
            batch["processing_status"] = "canceling"
            batch["cancel_initiated_at"] = _stamp(datetime.now(UTC))
        return batch

    def _end(self, batch: dict[str, Any], host: str, answered: int) -> None:
        """Answer the first ``answered`` requests; the rest expire, or are canceled when a
        cancel was initiated."""
        number = batch["_number"]
        requests = self.seen.inputs[number - 1]
        unrun = "canceled" if batch["cancel_initiated_at"] else "expired"
        lines = [self._result(r["custom_id"], r["params"]) for r in requests[:answered]]
        for key in self.script.stray_ids.get(number, []):
            lines.append(self._result(key, requests[0]["params"]))
        lines += [
            {"custom_id": r["custom_id"], "result": {"type": unrun}} for r in requests[answered:]
        ]
        kinds = [line["result"]["type"] for line in lines if line["custom_id"] in _ids(requests)]
        batch["request_counts"] = _counts(
            **{kind: kinds.count(kind) for kind in ("succeeded", "errored", "canceled", "expired")}
        )
        batch["processing_status"] = "ended"
        batch["ended_at"] = _stamp(datetime.now(UTC))
        batch["results_url"] = f"http://{host}/v1/messages/batches/{batch['id']}/results"
        self.results[batch["id"]] = lines

    def _result(self, key: str, params: dict[str, Any]) -> dict[str, Any]:
        failure = self.script.fail_line(params) if self.script.fail_line else None
        if failure is not None:
            error = {"type": "error", "error": {"type": "api_error", "message": failure}}
            return {"custom_id": key, "result": {"type": "errored", "error": error}}
        status, _, body = self.answer(params)
        if status == 200:
            return {"custom_id": key, "result": {"type": "succeeded", "message": body}}
        return {"custom_id": key, "result": {"type": "errored", "error": body}}


def _ids(requests: list[dict[str, Any]]) -> set[str]:
    return {r["custom_id"] for r in requests}


def _counts(**given: int) -> dict[str, int]:
    names = ("processing", "succeeded", "errored", "canceled", "expired")
    return {name: given.get(name, 0) for name in names}


def public(batch: dict[str, Any]) -> dict[str, Any]:
    """A batch object as the API shows it."""
    return {k: v for k, v in batch.items() if not k.startswith("_")}


@contextmanager
def anthropic_server(
    reply: Reply, script: BatchScript | None = None
) -> Iterator[tuple[str, BatchLog]]:
    """Serve the stand-in; yield its root URL (the SDK adds ``/v1/...``) and what it saw."""
    seen = BatchLog()
    state = _State(reply, script or BatchScript(), seen)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

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
            self._send(404, error_body(404, json.dumps({"error": {"message": self.path}})))

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
            if path == "/v1/messages":
                body = json.loads(raw)
                with state.lock:
                    seen.chat_bodies.append(body)
                status, headers, answer = state.answer(body)
                return self._send(status, answer, headers=headers)
            with state.lock:
                if path == "/v1/messages/batches":
                    status, answer = state.create(json.loads(raw))
                    return self._send(status, public(answer) if status == 200 else answer)
                match = re.fullmatch(r"/v1/messages/batches/([^/]+)/cancel", path)
                if match and match[1] in state.batches:
                    return self._send(200, public(state.cancel(match[1])))
            self._missing()

        def do_GET(self) -> None:
            self._body()
            if self._refused("GET"):
                return
            url = urlsplit(self.path)
            with state.lock:
                if url.path == "/v1/messages/batches":
                    seen.lists += 1
                    return self._send(200, self._list(parse_qs(url.query)))
                if match := re.fullmatch(r"/v1/messages/batches/([^/]+)/results", url.path):
                    if match[1] not in state.results:
                        return self._missing()
                    data = "".join(json.dumps(x) + "\n" for x in state.results[match[1]])
                    return self._send(200, data.encode(), "application/binary")
                if match := re.fullmatch(r"/v1/messages/batches/([^/]+)", url.path):
                    if match[1] not in state.batches:
                        return self._missing()
                    seen.polls += 1
                    host = self.headers.get("Host", "127.0.0.1")
                    return self._send(200, public(state.poll(match[1], host)))
            self._missing()

        def _list(self, query: dict[str, list[str]]) -> dict[str, Any]:
            newest = [public(b) for b in reversed(state.batches.values())]
            if "after_id" in query:
                ids = [b["id"] for b in newest]
                newest = newest[ids.index(query["after_id"][0]) + 1 :]
            limit = int(query.get("limit", ["20"])[0])
            page = newest[:limit]
            return {
                "data": page,
                "has_more": len(newest) > limit,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
            }

    with in_thread(_Server(("127.0.0.1", 0), Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
