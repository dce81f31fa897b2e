"""Retry timing shared by every client that talks to a server: Retry-After, backoff, and the one
policy that decides whether and how long to wait."""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass
from typing import Any


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Parse a Retry-After header (seconds or an HTTP date) into seconds to wait."""
    value = (value or "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


def refusal_wait_s(headers: Any) -> float | None:
    """Seconds a refusal's headers ask to wait: ``retry-after-ms`` (a non-standard header some
    OpenAI-compatible servers send; the openai SDK reads it first) or ``Retry-After`` (whole
    seconds or an HTTP date)."""
    try:
        ms = float(headers.get("retry-after-ms", ""))
    except ValueError:
        return retry_after_s(headers.get("retry-after"))
    return ms / 1000 if ms >= 0 else retry_after_s(headers.get("retry-after"))


def backoff_s(base_s: float, attempt: int, rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: ``base_s * 2**attempt``, scaled by a factor in [0.5, 1)."""
    draw = (rng or random).random()
    return base_s * 2**attempt * (0.5 + draw / 2)


@dataclass(frozen=True)
class RetryPolicy:
    """The one retry policy of every client (web fetcher, LLM, MediaWiki API, Google CSE, Hub).

    After a failed attempt (0-based ``attempt``) it waits what the server asked for (Retry-After,
    a maxlag) or else ``backoff_s * 2**attempt`` with jitter; it gives up after ``retries`` more
    attempts, or when the server asks for longer than ``max_retry_after_s``.
    """

    retries: int
    backoff_s: float = 1.0
    max_retry_after_s: float = 120.0

    def wait_s(self, attempt: int, asked_s: float | None = None) -> float | None:
        """Seconds to wait before trying again after failed ``attempt``; ``None``: give up."""
        if attempt >= self.retries:
            return None
        if asked_s is None:
            return backoff_s(self.backoff_s, attempt)
        return asked_s if asked_s <= self.max_retry_after_s else None

    def exhausted(self, attempt: int) -> bool:
        """Whether ``attempt`` was the last one allowed."""
        return attempt >= self.retries
