"""Canary keys, a variable to hold one, and the search for them in every file and text a run
leaves behind (outputs, caches, any ``.dvc`` folder, logs, console)."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SK = "sk-" + "proj-CANARY0123456789abcdefXYZ"
"""Shaped like an OpenAI key (written in two parts, so that secret scanners reading the
repository do not take the fake for a real one)."""
HF = "hf_" + "CANARY0123456789abcdefghijKLMN"
"""Shaped like a Hugging Face token (in two parts, as ``SK``)."""
ARBITRARY = "Zq4.vT8-mWx_2Lr"
"""No provider's shape, and too short for the generic ones: only its value, read from the
environment variable that holds it, can find it."""


def key_variable() -> str:
    """A fresh variable name no rule calls secret (not ``*_KEY``, ``*_TOKEN`` ...): only
    registering it (``llm.api_key_env``) makes its value a secret."""
    return f"BENCHSMITH_CANARY_{uuid.uuid4().hex[:8].upper()}"


def leaks(
    canaries: Iterable[str], folders: Iterable[Path] = (), texts: Iterable[str] = ()
) -> list[str]:
    """Where any canary shows: each file under ``folders`` (hidden ones and SQLite journals
    included) and each of ``texts``, by path or position."""
    needles = [c for c in canaries if c]
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                data = path.read_bytes()
                found += [f"{path}: {c}" for c in needles if c.encode() in data]
    for n, text in enumerate(texts):
        found += [f"text {n}: {c}" for c in needles if c in text]
    return found


@contextmanager
def redacting_logs() -> Iterator[None]:
    """Log records redacted as the CLI's ``setup_logging`` does, for the block only."""
    from pipelines.secrets import install_log_filter

    before = logging.getLogRecordFactory()
    install_log_filter()
    try:
        yield
    finally:
        logging.setLogRecordFactory(before)


def echoed(status: int, sent: str) -> tuple[int, dict[str, str], str]:
    """An error answer quoting ``sent`` (the request's Authorization header) back, in its body
    and in its headers, as a careless server or proxy does."""
    key = sent.removeprefix("Bearer ")
    headers = {
        "x-echo-authorization": sent,
        "www-authenticate": f'Bearer error="invalid_token", token="{key}"',
        "retry-after": "0",
        "retry-after-ms": "1",  # the openai SDK's own retries (batch endpoints) wait 1 ms
    }
    message = f"refused (sent with {sent}); {key} is not a key this server knows"
    error = {"error": {"message": message, "type": "invalid_request_error", "code": key}}
    return status, headers, json.dumps(error)


class Echo:
    """A ``reply`` for :mod:`tests.support.openai_server` and :mod:`tests.support.batch_server`
    answering every request it is asked about with :func:`echoed`, the statuses in turn; with
    ``by_messages`` the status is chosen by the request's messages instead, so a retried request
    meets the same status whatever order concurrent calls arrive in. ``log`` is the server's log
    (set once it runs): every request carries the same key."""

    def __init__(self, *statuses: int, by_messages: bool = False):
        self.statuses = statuses
        self.by_messages = by_messages
        self.log: Any = None

    def __call__(self, body: dict[str, Any], n: int) -> tuple[int, dict[str, str], str]:
        if self.by_messages:
            asked = json.dumps(body.get("messages", body), sort_keys=True).encode()
            n = int(hashlib.sha256(asked).hexdigest(), 16) + 1
        status = self.statuses[(n - 1) % len(self.statuses)]
        return echoed(status, self.log.headers[-1]["authorization"])
