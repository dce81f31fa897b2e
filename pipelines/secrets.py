"""One redaction layer for every secret benchsmith may hold.

Keys come from environment variables only. A server may still echo a key back (in an error body,
a header, a URL), so every error string passes through :func:`redact` before it reaches a
record, a log line, a progress bar, stats, the cache, a card or a message shown to the user.

What is redacted:

- the value of every environment variable benchsmith reads a key from (:data:`KEY_ENVS`, plus
  any name registered with :func:`register_env`, such as ``llm.api_key_env``), and of any
  variable whose name says it holds a secret (``*_KEY``, ``*_TOKEN``, ``*_SECRET`` ...);
- anything that looks like a credential whatever its source: ``Bearer …``, ``key=`` /
  ``token=`` / ``api_key:`` values, ``sk-…`` and ``hf_…`` keys, and ``user:password@`` in URLs.
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
}
"""Environment variables benchsmith reads keys from; :func:`register_env` adds more."""

MIN_SECRET_LEN = 6
"""Shorter values (``"1"``, ``"true"``) are not treated as secrets: replacing them would mangle
ordinary text and hide nothing."""

_SECRET_NAME = re.compile(r"(?i)(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$")
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # "Authorization: Bearer <token>", "Authorization: Basic <b64>", a bare "Bearer <token>"
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:[a-z]+\s+)?)[^\s\"',;}]{6,}"),
     rf"\1{REDACTED}"),
    (re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}"), rf"\1{REDACTED}"),
    # URL query parameters: ?key=…, &token=…, &sig=…
    (re.compile(r"(?i)([?&;](?:amp;)?(?:key|api_?key|token|access_token|password|secret|sig|"
                r"signature)=)[^&#\s\"'<>]+"), rf"\1{REDACTED}"),
    # named fields in JSON, headers and messages: "api_key": "…", x-api-key: …, password=…
    (re.compile(r"(?i)(\b(?:x-)?(?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|"
                r"client[_-]?secret|secret[_-]?key|password|passwd)[\"']?\s*[=:]\s*[\"']?)"
                r"[^\s\"'<>,;}&]{4,}"), rf"\1{REDACTED}"),
    # provider key shapes: OpenAI/Anthropic sk-…, Hugging Face hf_…, Google AIza…
    (re.compile(r"\b(?:sk-[A-Za-z0-9_\-]{12,}|hf_[A-Za-z0-9]{16,}|AIza[0-9A-Za-z_\-]{20,})"),
     REDACTED),
    # user:password@host in URLs
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:)[^/\s@]+@"), rf"\1{REDACTED}@"),
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


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every known secret (also URL-encoded) and credential-shaped value replaced
    by ``REDACTED``; ``extra`` adds values to hide beyond the environment's."""
    if not text:
        return text
    for secret in [*sorted((e for e in extra if e), key=len, reverse=True), *secret_values()]:
        if secret in text:
            text = text.replace(secret, REDACTED)
        encoded = quote(secret, safe="")
        if encoded != secret and encoded in text:
            text = text.replace(encoded, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact_value(value: Any) -> Any:
    """:func:`redact` applied to every string inside nested dicts, lists and tuples."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v) for v in value)
    return value


def redact_error(exc: BaseException) -> str:
    """``"Type: message"`` of an exception, redacted: the form an error takes in a record."""
    return redact(f"{type(exc).__name__}: {exc}")


class RedactingFilter(logging.Filter):
    """Rewrites each log record's message (and its traceback text) with secrets redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            formatted = logging.Formatter().formatException(record.exc_info)
            record.exc_text, record.exc_info = redact(formatted), None
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


def install_log_filter(logger: logging.Logger | None = None) -> None:
    """Put a :class:`RedactingFilter` on ``logger``'s handlers (the root's by default) once."""
    target = logger or logging.getLogger()
    for handler in target.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
