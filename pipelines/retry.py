"""Retry timing shared by every client that talks to a server: Retry-After and backoff."""

from __future__ import annotations

import email.utils
import random
import time


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


def backoff_s(base_s: float, attempt: int, rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: ``base_s * 2**attempt``, scaled by a factor in [0.5, 1)."""
    draw = (rng or random).random()
    return base_s * 2**attempt * (0.5 + draw / 2)
