"""An OpenAI-compatible chat server on 127.0.0.1 that enforces a rate limit with a token bucket.

Each request takes one token from a bucket of ``burst`` tokens that refills at ``rate`` per
second. With none left the request is refused at once, before any latency, as the OpenAI API
refuses one over its rate limit: HTTP 429 with an ``error`` object of code
``rate_limit_exceeded`` (platform.openai.com/docs/guides/error-codes), ``Retry-After`` in whole
seconds, rounded up (RFC 9110, section 10.2.3, allows no fraction), and ``retry-after-ms``, the
finer header the openai SDK reads first. With ``headers=True`` every answer also carries the
rate-limit headers of platform.openai.com/docs/guides/rate-limits ("Rate limits in headers"):
``x-ratelimit-limit-requests`` (the bucket's size), ``x-ratelimit-remaining-requests`` and
``x-ratelimit-reset-requests``, the time until the bucket is full again, as a duration such as
``250ms``.

Answers go through :func:`tests.support.openai_server.openai_server` (its ``gate``).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.support.openai_server import ServerLog, openai_server

REFUSAL = {
    "error": {
        "message": "Rate limit reached for requests",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}


@dataclass
class TokenBucket:
    """``burst`` tokens, refilled at ``rate`` per second; one per request."""

    rate: float
    burst: float
    clock: Callable[[], float] = time.monotonic
    tokens: float = field(init=False)
    stamp: float = field(init=False)
    served: int = 0
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.tokens, self.stamp = self.burst, self.clock()

    def take(self) -> float:
        """0 if a token was taken, else the seconds until one is back."""
        with self.lock:
            now = self.clock()
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1:
                self.tokens -= 1
                self.served += 1
                return 0.0
            self.refused += 1
            return (1 - self.tokens) / self.rate

    def headers(self) -> dict[str, str]:
        """OpenAI's request rate-limit headers for the bucket as it stands."""
        with self.lock:
            remaining = math.floor(self.tokens)
            refill_ms = math.ceil(1000 * (self.burst - self.tokens) / self.rate)
        return {
            "x-ratelimit-limit-requests": str(int(self.burst)),
            "x-ratelimit-remaining-requests": str(remaining),
            "x-ratelimit-reset-requests": f"{refill_ms}ms",
        }


@contextmanager
def rate_limited_server(
    answer: str,
    rate: float,
    burst: float | None = None,
    latency_s: float = 0.0,
    headers: bool = False,
    precise: bool = True,
) -> Iterator[tuple[str, TokenBucket, ServerLog]]:
    """Serve ``answer`` to every chat completion within ``rate`` requests per second (a bucket
    of ``burst`` tokens, one second's worth by default) after ``latency_s``; refuse the rest
    with 429, with ``retry-after-ms`` besides ``Retry-After`` when ``precise``, and with the
    ``x-ratelimit-*`` headers on every answer when ``headers``. Yields the base URL (ending in
    /v1), the bucket (its ``served`` and ``refused`` counts) and the request log."""
    bucket = TokenBucket(rate, burst if burst is not None else rate)

    def gate(body: dict[str, Any]) -> dict[str, str] | tuple[int, dict[str, str], str]:
        wait = bucket.take()
        extra = bucket.headers() if headers else {}
        if not wait:
            return extra
        asked = {"Retry-After": str(max(1, math.ceil(wait)))}
        if precise:
            asked["retry-after-ms"] = str(math.ceil(1000 * wait))
        return 429, {**extra, **asked}, json.dumps(REFUSAL)

    with openai_server(lambda body, n: answer, latency_s, gate) as (url, seen):
        yield url, bucket, seen
