"""Adaptive concurrency: how many calls one endpoint and model get in flight at once.

``llm.concurrency`` is the ceiling. Below it the limit follows AIMD, the rule of NeMo Data
Designer's request admission (``RequestAdmissionTuningConfig`` in
``packages/data-designer-config/src/data_designer/config/run_config.py``, NVIDIA-NeMo/DataDesigner
at commit 05cba0846d9b42df76c63a2d7aff1754bce89bc2): a 429 multiplies it by 0.75 (never below
1), 25 successes in a row add 1 (up to the ceiling). Unlike there, a burst of 429s from calls
that were already in flight when the limit was cut counts as one signal, not one cut each
(TCP's once-per-window rule): 32 calls refused together cut 32 to 24, not to 1.

The limit starts at the ceiling, which is what a fixed pool ran at: a server that never refuses
sees no difference, and one that does is answered within a few 429s (32 → 24 → 18 → 13 → 9 …),
where starting low would cost 25 successes per step on every server that has room.

Whoever sends a call waits first for the endpoint's pause: a 429's Retry-After holds every new
call to the endpoint, not only the retry (a 429 without one holds only its own retry, for the
retry policy's backoff, which doubles with each attempt: too long to stop everyone); so does a
response saying no request (or no token) is left before its reset
(:func:`rate_limits` reads OpenAI's and Anthropic's headers, as their rate-limit guides name
them: platform.openai.com/docs/guides/rate-limits, docs.anthropic.com/en/api/rate-limits).
Curator's ``openai_online_request_processor.py`` (bespokelabsai/curator at commit
8f26600e0a6b41f5fc1098ac2d4f22fe0ec95b97) reads only ``x-ratelimit-limit-requests`` and
``-tokens``, once, from a probe request, to size its per-minute budgets; here every answer's
remaining counts and resets are read, and no probe is sent.

One :class:`Pacer` serves every client of the process that talks to the same endpoint and
model (:class:`Pacers`), so a judge and a generator on one server keep separate pools, and two
stages asking one model share theirs.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

DECREASE = 0.75
"""Factor on the limit after a 429 (Data Designer's ``multiplicative_decrease_factor``)."""
SUCCESSES_PER_STEP = 25
"""Successes in a row that raise the limit by one (Data Designer's
``successes_until_increase``)."""
HISTORY = 4096
"""Limit changes a pacer keeps (time and limit each); a client's stats show a compact part."""

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def duration_s(value: str | None) -> float | None:
    """Seconds in a Go-style duration as OpenAI's ``x-ratelimit-reset-*`` headers send it
    (``1s``, ``6m0s``, ``20ms``, ``1h2m3.5s``); a bare number is seconds; ``None`` if
    unreadable."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def instant_s(value: str | None, now: float) -> float | None:
    """Seconds from ``now`` (Unix time) to an RFC 3339 instant (Anthropic's
    ``anthropic-ratelimit-*-reset``, such as ``2026-11-28T12:00:03Z``); 0 if past."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def _count(value: str | None) -> int | None:
    try:
        return int(float(value)) if value is not None and value.strip() else None
    except ValueError:
        return None


@dataclass(frozen=True)
class RateLimits:
    """What a response's rate-limit headers say: requests and tokens left, the window's size,
    and seconds until the window is whole again. ``None``: not sent."""

    requests_remaining: int | None = None
    requests_limit: int | None = None
    requests_reset_s: float | None = None
    tokens_remaining: int | None = None
    tokens_limit: int | None = None
    tokens_reset_s: float | None = None

    def pause_s(self) -> float | None:
        """Seconds no new call should start, or ``None``: when no request (or no token) is
        left, until one comes back. A window refills evenly over its reset, so one request
        is back after ``reset / (limit - remaining)`` when the limit is sent, else at the
        reset; tokens wait for the reset (a call's size is not known before it is sent)."""
        waits = []
        if self.requests_remaining is not None and self.requests_remaining <= 0:
            reset = self.requests_reset_s
            if reset is not None and self.requests_limit:
                reset /= self.requests_limit - self.requests_remaining
            waits.append(reset)
        if self.tokens_remaining is not None and self.tokens_remaining <= 0:
            waits.append(self.tokens_reset_s)
        known = [w for w in waits if w is not None and w > 0]
        return max(known) if known else None


_ANTHROPIC = (
    "anthropic-ratelimit-requests-remaining",
    "anthropic-ratelimit-tokens-remaining",
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
)


def rate_limits(headers: Mapping[str, str], now: float | None = None) -> RateLimits:
    """The rate-limit headers of a response, OpenAI's (``x-ratelimit-remaining-requests``,
    ``-tokens``, ``x-ratelimit-limit-*``, ``x-ratelimit-reset-*`` as durations) or
    Anthropic's (``anthropic-ratelimit-requests-remaining``, ``-limit``, ``-reset`` as RFC 3339
    instants, and the same for tokens). ``headers`` is any case-insensitive mapping (httpx's)
    or a dict; ``now`` is Unix time, for Anthropic's instants."""
    lowered = {k.lower(): v for k, v in headers.items()}
    get = lowered.get
    if any(name in lowered for name in _ANTHROPIC):
        clock = time.time() if now is None else now
        return RateLimits(
            requests_remaining=_count(get("anthropic-ratelimit-requests-remaining")),
            requests_limit=_count(get("anthropic-ratelimit-requests-limit")),
            requests_reset_s=instant_s(get("anthropic-ratelimit-requests-reset"), clock),
            tokens_remaining=_count(get("anthropic-ratelimit-tokens-remaining")),
            tokens_limit=_count(get("anthropic-ratelimit-tokens-limit")),
            tokens_reset_s=instant_s(get("anthropic-ratelimit-tokens-reset"), clock),
        )
    return RateLimits(
        requests_remaining=_count(get("x-ratelimit-remaining-requests")),
        requests_limit=_count(get("x-ratelimit-limit-requests")),
        requests_reset_s=duration_s(get("x-ratelimit-reset-requests")),
        tokens_remaining=_count(get("x-ratelimit-remaining-tokens")),
        tokens_limit=_count(get("x-ratelimit-limit-tokens")),
        tokens_reset_s=duration_s(get("x-ratelimit-reset-tokens")),
    )


@dataclass(frozen=True)
class Slot:
    """One admitted call; ``cuts`` is how many times the limit had been cut when it started."""

    cuts: int


class Pacer:
    """The AIMD limit of one endpoint and model, its pause, and the calls in flight.

    Thread-safe. ``clock`` is monotonic seconds (a fake one in tests); waiting for a pause
    goes through the caller's ``sleep``, waiting for a free place through a condition that
    every release wakes.
    """

    def __init__(self, ceiling: int, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.ceiling = max(1, ceiling)
        self.limit = self.ceiling
        self.in_flight = 0
        self.rate_limited = 0
        """429s reported, in total."""
        self._cuts = 0
        self._streak = 0
        self._paused_until = 0.0
        self._pauses = 0
        self._changes: deque[tuple[int, float, int]] = deque(maxlen=HISTORY)
        self.changes_total = 0
        self._cond = threading.Condition()

    # --- admission ----------------------------------------------------------------------

    def pause_s(self) -> float:
        """Seconds until a new call may start (0: none to wait)."""
        with self._cond:
            return max(0.0, self._paused_until - self.clock())

    def try_acquire(self) -> Slot | None:
        """A slot if the endpoint is not paused and fewer than ``limit`` calls are in
        flight; ``None`` otherwise."""
        with self._cond:
            if self._paused_until > self.clock() or self.in_flight >= self.limit:
                return None
            return self._admit()

    def acquire(self, sleep: Callable[[float], None], slept: int = -1) -> Slot:
        """Wait for the pause (through ``sleep``) and a free place, then take it.

        ``slept`` is the pause (from :meth:`throttled`) the caller has already waited out
        with its own sleep; a later pause is waited for again.
        """
        while True:
            with self._cond:
                wait = self._paused_until - self.clock()
                if wait > 0 and self._pauses != slept:
                    slept = self._pauses
                elif self.in_flight < self.limit:
                    return self._admit()
                else:
                    self._cond.wait(timeout=1.0)
                    continue
            sleep(wait)

    def _admit(self) -> Slot:
        self.in_flight += 1
        return Slot(self._cuts)

    # --- outcomes -----------------------------------------------------------------------

    def succeeded(self, slot: Slot) -> None:
        """A call answered: 25 in a row raise the limit by one, up to the ceiling."""
        with self._cond:
            self._release()
            self._streak += 1
            if self._streak >= SUCCESSES_PER_STEP:
                self._streak = 0
                if self.limit < self.ceiling:
                    self._set(self.limit + 1)

    def failed(self, slot: Slot) -> None:
        """A call failed some other way (5xx, timeout, refused): the limit stays."""
        with self._cond:
            self._release()

    def throttled(self, slot: Slot, pause_s: float | None) -> int:
        """A call got a 429: the limit is cut (once for calls started before the last cut),
        and no new call starts for ``pause_s`` (the Retry-After). Returns the pause's number
        if this one set it (the caller sleeps it and passes it to :meth:`acquire` as
        ``slept``), else -1 (a longer pause was already set: :meth:`acquire` waits out the
        rest)."""
        with self._cond:
            self._release()
            self.rate_limited += 1
            self._streak = 0
            if slot.cuts == self._cuts:
                self._cuts += 1
                self._set(max(1, math.floor(self.limit * DECREASE)))
            return self._pauses if pause_s and self._pause(pause_s) else -1

    def read_headers(self, headers: Mapping[str, str]) -> None:
        """:meth:`observe` a response's headers (a backend's ``on_headers``)."""
        self.observe(rate_limits(headers))

    def observe(self, limits: RateLimits) -> None:
        """A response's rate-limit headers: pause new calls while none is left."""
        pause = limits.pause_s()
        if pause:
            with self._cond:
                self._pause(pause)

    def _release(self) -> None:
        self.in_flight = max(0, self.in_flight - 1)
        self._cond.notify()

    def _pause(self, seconds: float) -> bool:
        """Hold new calls ``seconds`` from now; whether that extends the current pause."""
        until = self.clock() + seconds
        if until <= self._paused_until:
            return False
        self._paused_until = until
        self._pauses += 1
        return True

    def _set(self, limit: int) -> None:
        if limit != self.limit:
            grew = limit > self.limit
            self.limit = limit
            self.changes_total += 1
            self._changes.append((self.changes_total, self.clock(), limit))
            if grew:
                self._cond.notify(limit)

    # --- sharing and history ------------------------------------------------------------

    def raise_ceiling(self, ceiling: int) -> None:
        """A client with a higher ``llm.concurrency`` joined: the pool may grow to it (at
        once, if no 429 ever cut the limit)."""
        with self._cond:
            if ceiling > self.ceiling:
                never_cut = self._cuts == 0 and self.limit == self.ceiling
                self.ceiling = ceiling
                if never_cut:
                    self._set(ceiling)

    def mark(self) -> Mark:
        """Where the pacer stands now, for a later :meth:`series` of what changed since."""
        with self._cond:
            return Mark(self.clock(), self.limit, self.changes_total, self.rate_limited)

    def series(self, mark: Mark) -> tuple[list[tuple[float, int]], int]:
        """The limit at ``mark`` and at each change since, as (seconds after the mark,
        limit), and the count of changes since that are no longer kept."""
        with self._cond:
            kept = [(t, n) for seq, t, n in self._changes if seq > mark.changes]
            dropped = self.changes_total - mark.changes - len(kept)
        return [(0.0, mark.limit)] + [(t - mark.time, n) for t, n in kept], dropped


@dataclass(frozen=True)
class Mark:
    """A pacer's clock, limit, change count and 429 count at one moment."""

    time: float
    limit: int
    changes: int
    rate_limited: int


class Pacers:
    """The pacers of a process, one per endpoint and model."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._pacers: dict[tuple[str, str], Pacer] = {}
        self._lock = threading.Lock()

    def get(self, endpoint: str, model: str, ceiling: int) -> Pacer:
        """The pacer of ``endpoint`` and ``model``, made at ``ceiling`` or raised to it."""
        with self._lock:
            pacer = self._pacers.get((endpoint, model))
            if pacer is None:
                pacer = self._pacers[(endpoint, model)] = Pacer(ceiling, self.clock)
                return pacer
        pacer.raise_ceiling(ceiling)
        return pacer


PACERS = Pacers()
"""Every client of this process that talks to one endpoint and model shares its pacer."""


SERIES_POINTS = 64
"""Most (time, limit) points a client's stats show: the first and last halves of its changes."""


def summary(pacer: Pacer, mark: Mark, ceiling: int, rate_limited: int) -> dict[str, Any]:
    """The ``concurrency`` block of a client's stats: the limit at ``mark`` and each change
    since (seconds after ``mark``, limit; the first and last :data:`SERIES_POINTS` / 2 when
    there are more, and how many were left out), its final, least and greatest values, and
    the client's 429s."""
    series, dropped = pacer.series(mark)
    limits = [n for _, n in series]
    if len(series) > SERIES_POINTS:
        half = SERIES_POINTS // 2
        dropped += len(series) - SERIES_POINTS
        series = series[:half] + series[-half:]
    block: dict[str, Any] = {
        "adaptive": True,
        "ceiling": ceiling,
        "rate_limited": rate_limited,
        "final": limits[-1],
        "min": min(limits),
        "max": max(limits),
        "series": [[round(t, 3), n] for t, n in series],
    }
    if dropped:
        block["series_left_out"] = dropped
    return block
