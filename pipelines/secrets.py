"""One redaction layer for every secret benchsmith may hold.

Keys come from environment variables only. A server may still echo a key back (in an error body,
a header, a URL), so every error string passes through :func:`redact` before it reaches a
record, a log line, a progress bar, stats, the cache, a card or a message shown to the user.

What is redacted:

- the value of every environment variable benchsmith reads a key from (:data:`KEY_ENVS`, plus
  any name registered with :func:`register_env`, such as ``llm.api_key_env``), and of any
  variable whose name says it holds a secret (``*_KEY``, ``*_TOKEN``, ``*_SECRET`` ...);
- anything that looks like a credential whatever its source: ``Bearer …``, ``key=`` /
  ``token=`` / ``api_key:`` values, ``sk-…`` and ``hf_…`` keys, and user info in URLs.

Where it is applied (the choke points, so callers need not think of it):

- exceptions: every :class:`~pipelines.errors.BenchsmithError` redacts its message when it is
  made, so the CLI, a stage's failure and any record built from ``str(exc)`` are clean;
- the LLM layer: a failed call's reason (:class:`~pipelines.llm.backends.base.CallFailed`,
  ``TransientError``, a batch line's failure), every failed ``Outcome``'s error (hence every
  drop, item and usage count built from it) and every answer before the response cache stores
  it (the secrets' values only: an answer's text is data);
- records and reports: :class:`~pipelines.outputs.TableWriter` redacts the ``reason`` and
  ``detail`` columns of every table, and ``write_json`` every ``stats.json`` and report;
- logs: :func:`install_log_filter` (called by ``setup_logging``) redacts every log record as
  it is made, from any logger and for any handler; progress bar labels are redacted too;
- the Hub: ``huggingface_hub`` errors become a one-line :class:`~pipelines.errors.PublishError`;
  the card's params go through :func:`redact_value`;
- search: the search log and Google's client logs (``pipelines.sources.web.search``).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

REDACTED = "REDACTED"

KEY_ENVS: set[str] = {
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "GOOGLE_API_KEY",
    "GOOGLE_CSE_ID",
    "BRAVE_API_KEY",
    "SERPAPI_KEY",
}
"""Environment variables benchsmith reads keys from; :func:`register_env` adds more."""

MIN_SECRET_LEN = 6
"""Shorter values (``"1"``, ``"true"``) are not treated as secrets: replacing them would mangle
ordinary text and hide nothing."""

_SECRET_NAME = re.compile(r"(?i)(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$")
_TOKEN = r"[\w.~+/=\-]"
_CREDENTIAL = rf"(?:(?={_TOKEN}*\d){_TOKEN}{{8,}}|{_TOKEN}{{20,}})"
"""A token that looks like a key, not a word: 8 characters or more with a digit, or 20 or more
("Bearer instruments" stays as it is)."""
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # "Authorization: Bearer <token>", "Authorization: Basic <b64>", "authorization=<token>"
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest|"
                r"api-?key)\s+)?)[^\s\"',;}]{6,}"), rf"\1{REDACTED}"),
    # a bare "Bearer <token>" (an echoed header, a message quoting what was sent)
    (re.compile(rf"(?i)(\bbearer\s+){_CREDENTIAL}"), rf"\1{REDACTED}"),
    # URL query parameters: ?key=…, &token=…, &sig=…
    (re.compile(r"(?i)([?&;](?:amp;)?(?:key|api_?key|token|access_token|password|secret|sig|"
                r"signature)=)[^&#\s\"'<>]+"), rf"\1{REDACTED}"),
    # named fields in JSON, headers and messages: "api_key": "…", x-api-key: …, password=…
    (re.compile(r"(?i)(\b(?:x-)?(?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|"
                r"client[_-]?secret|secret[_-]?key|password|passwd)[\"']?\s*[=:]\s*[\"']?)"
                r"[^\s\"'<>,;}&]{4,}"), rf"\1{REDACTED}"),
    # provider key shapes (with a digit, as real keys have): OpenAI/Anthropic sk-…, Hugging
    # Face hf_…, Google AIza…
    (re.compile(r"\b(?:sk-(?=[A-Za-z0-9_\-]*\d)[A-Za-z0-9_\-]{12,}|"
                r"hf_(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{16,}|AIza[0-9A-Za-z_\-]{20,})"), REDACTED),
    # user info in URLs: scheme://user:password@host (a password may hold "/"), ://token@host
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://)[^@\s/?#]*(?::[^@\s?#]*)?@"), rf"\1{REDACTED}@"),
)  # fmt: skip


def register_env(*names: str) -> None:
    """Treat the values of environment variables ``names`` as secrets from now on."""
    KEY_ENVS.update(n for n in names if n)


def secret_values() -> list[str]:
    """The secret values set in the environment now, longest first."""
    values = {
        value.strip()
        for name, value in os.environ.items()
        if name in KEY_ENVS or _SECRET_NAME.search(name)
    }
    return sorted((v for v in values if len(v) >= MIN_SECRET_LEN), key=len, reverse=True)


def redact(text: str, extra: Iterable[str] = (), *, patterns: bool = True) -> str:
    """``text`` with every known secret (also URL-encoded) replaced by ``REDACTED``.

    Known secrets are the environment's (see the module docstring) and ``extra`` (values held
    some other way). With ``patterns`` (the default, for error messages) credential-shaped
    values are redacted too; without, only the secrets themselves, for data such as a search
    hit's URL, which may hold an ordinary ``key=`` parameter.
    """
    if not text:
        return text
    for secret in [*sorted((e for e in extra if e), key=len, reverse=True), *secret_values()]:
        if secret in text:
            text = text.replace(secret, REDACTED)
        encoded = quote(secret, safe="")
        if encoded != secret and encoded in text:
            text = text.replace(encoded, REDACTED)
    if patterns:
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
    return text


def redact_value(value: Any) -> Any:
    """:func:`redact` applied to every string inside nested dicts (keys too), lists and
    tuples."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v) for v in value)
    return value


def redact_error(exc: BaseException) -> str:
    """``"Type: message"`` of an exception, redacted: the form an error takes in a record."""
    return redact(f"{type(exc).__name__}: {exc}")


def redact_record(record: logging.LogRecord, extra: Iterable[str] = ()) -> None:
    """Rewrite a log record's message, traceback and stack text with secrets redacted (its
    arguments are merged into the message only when something was redacted)."""
    try:
        message = record.getMessage()
    except Exception:  # a malformed call (wrong arguments): its handler reports it, as usual
        message = None
    if message is not None and (clean := redact(message, extra)) != message:
        record.msg, record.args = clean, None
    if record.exc_info and record.exc_info[1] is not None:
        formatted = logging.Formatter().formatException(record.exc_info)
        clean = redact(formatted, extra)
        if clean != formatted:
            record.exc_text, record.exc_info = clean, None
    elif record.exc_text:
        record.exc_text = redact(record.exc_text, extra)
    if record.stack_info:
        record.stack_info = redact(record.stack_info, extra)


class RedactingFilter(logging.Filter):
    """Redacts each record it sees, also of ``extra`` values (keys not held in the
    environment): for a logger or handler that needs more than :func:`install_log_filter`."""

    def __init__(self, extra: Iterable[str] = ()):
        super().__init__()
        self.extra = tuple(e for e in extra if e)

    def filter(self, record: logging.LogRecord) -> bool:
        redact_record(record, self.extra)
        return True


def install_log_filter() -> None:
    """Redact every log record as it is made, whichever logger makes it and whichever handler
    shows it (the console, a file, pytest's ``caplog``), by wrapping the log record factory
    once. Records below a logger's level are never made, so they cost nothing."""
    current = logging.getLogRecordFactory()
    if getattr(current, "redacting", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = current(*args, **kwargs)
        redact_record(record)
        return record

    factory.redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)
