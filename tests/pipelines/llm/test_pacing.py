"""The AIMD pacer and the rate-limit header parser, driven by a fake clock (no sleeps)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from pipelines.llm.pacing import (
    SERIES_POINTS,
    SUCCESSES_PER_STEP,
    Pacer,
    Pacers,
    RateLimits,
    Slot,
    duration_s,
    instant_s,
    rate_limits,
    summary,
)


class Clock:
    """Monotonic seconds that move only when told; ``sleep`` moves them and is recorded."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def take(pacer: Pacer, n: int) -> list[Slot]:
    slots = [pacer.try_acquire() for _ in range(n)]
    assert all(s is not None for s in slots)
    return [s for s in slots if s is not None]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5)],
)
def test_openai_reset_durations_are_read(text: str, seconds: float) -> None:
    assert duration_s(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "5 s", "3x", "1s2"])
def test_unreadable_durations_are_none(text: str) -> None:
    assert duration_s(text) is None


def test_openai_headers_are_read_whatever_their_case() -> None:
    headers = {
        "X-RateLimit-Remaining-Requests": "0",
        "x-ratelimit-limit-requests": "600",
        "x-ratelimit-reset-requests": "6m0s",
        "x-ratelimit-remaining-tokens": "149984",
        "x-ratelimit-reset-tokens": "6ms",
    }
    limits = rate_limits(headers)
    assert limits == RateLimits(
        requests_remaining=0,
        requests_limit=600,
        requests_reset_s=360.0,
        tokens_remaining=149984,
        tokens_reset_s=0.006,
    )
    # no request left: one comes back after reset / limit (a window refills evenly)
    assert limits.pause_s() == pytest.approx(0.6)


def test_anthropic_headers_are_read_in_the_same_parser() -> None:
    now = datetime(2026, 11, 28, 12, 0, 0, tzinfo=UTC).timestamp()
    headers = {
        "anthropic-ratelimit-requests-remaining": "12",
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-reset": "2026-11-28T12:00:03Z",
        "anthropic-ratelimit-tokens-remaining": "0",
        "anthropic-ratelimit-tokens-reset": "2026-11-28T12:00:20.5+00:00",
    }
    limits = rate_limits(headers, now=now)
    assert limits.requests_remaining == 12 and limits.requests_limit == 50
    assert limits.requests_reset_s == pytest.approx(3.0)
    assert limits.tokens_remaining == 0 and limits.tokens_reset_s == pytest.approx(20.5)
    assert limits.pause_s() == pytest.approx(20.5)  # no token left: wait for the reset


def test_a_past_or_unreadable_instant_asks_no_wait() -> None:
    now = datetime(2026, 11, 28, 12, 0, 0, tzinfo=UTC)
    assert instant_s((now - timedelta(seconds=5)).isoformat(), now.timestamp()) == 0.0
    assert instant_s("tomorrow", now.timestamp()) is None
    assert instant_s("2026-11-28T12:00:03", now.timestamp()) is None  # no offset: unknown zone
    assert RateLimits(requests_remaining=3, requests_reset_s=9.0).pause_s() is None
    assert rate_limits({"content-type": "application/json"}) == RateLimits()


def test_a_429_cuts_the_limit_by_a_quarter_never_below_one() -> None:
    clock = Clock()
    pacer = Pacer(32, clock)
    limits = []
    for _ in range(12):
        (slot,) = take(pacer, 1)
        pacer.throttled(slot, None)
        limits.append(pacer.limit)
    assert limits == [24, 18, 13, 9, 6, 4, 3, 2, 1, 1, 1, 1]
    assert pacer.rate_limited == 12


def test_429s_of_calls_sent_before_a_cut_count_once() -> None:
    pacer = Pacer(32, Clock())
    burst = take(pacer, 32)
    for slot in burst:  # all 32 refused together: one signal
        pacer.throttled(slot, None)
    assert pacer.limit == 24 and pacer.rate_limited == 32 and pacer.in_flight == 0
    (after,) = take(pacer, 1)  # sent after the cut: its 429 cuts again
    pacer.throttled(after, None)
    assert pacer.limit == 18


def test_25_successes_in_a_row_add_one_up_to_the_ceiling() -> None:
    pacer = Pacer(4, Clock())
    (slot,) = take(pacer, 1)
    pacer.throttled(slot, None)
    assert pacer.limit == 3
    for _ in range(SUCCESSES_PER_STEP - 1):
        (slot,) = take(pacer, 1)
        pacer.succeeded(slot)
    assert pacer.limit == 3  # 24 successes: not yet
    (slot,) = take(pacer, 1)
    pacer.succeeded(slot)
    assert pacer.limit == 4
    for _ in range(3 * SUCCESSES_PER_STEP):
        (slot,) = take(pacer, 1)
        pacer.succeeded(slot)
    assert pacer.limit == 4  # the ceiling


def test_a_429_breaks_the_run_of_successes() -> None:
    pacer = Pacer(8, Clock())
    (slot,) = take(pacer, 1)
    pacer.throttled(slot, None)  # 8 -> 6
    for _ in range(SUCCESSES_PER_STEP - 1):
        (slot,) = take(pacer, 1)
        pacer.succeeded(slot)
    first, second = take(pacer, 2)
    pacer.throttled(first, None)  # -> 4, the run starts again
    pacer.succeeded(second)
    assert pacer.limit == 4
    for _ in range(SUCCESSES_PER_STEP - 2):
        (slot,) = take(pacer, 1)
        pacer.succeeded(slot)
    assert pacer.limit == 4
    (slot,) = take(pacer, 1)
    pacer.succeeded(slot)
    assert pacer.limit == 5


def test_no_more_than_the_limit_are_in_flight_and_other_failures_keep_it() -> None:
    pacer = Pacer(3, Clock())
    slots = take(pacer, 3)
    assert pacer.try_acquire() is None
    pacer.failed(slots[0])  # a 5xx or a timeout: the place is free, the limit stays
    assert pacer.limit == 3 and pacer.try_acquire() is not None


def test_retry_after_holds_every_new_call_to_the_endpoint() -> None:
    clock = Clock()
    pacer = Pacer(8, clock)
    first, _ = take(pacer, 2)
    pause = pacer.throttled(first, 7.0)
    assert pacer.pause_s() == 7.0 and pacer.try_acquire() is None
    clock.now += 6.9
    assert pacer.try_acquire() is None
    clock.now += 0.1
    assert pacer.try_acquire() is not None
    # the caller that slept its own Retry-After does not wait for it again
    clock.now -= 7.0
    assert pacer.acquire(clock.sleep, slept=pause) is not None and clock.slept == []
    # anyone else sleeps what is left of the pause
    clock.now += 2.5
    pacer.acquire(clock.sleep)
    assert clock.slept == [4.5]


def test_a_shorter_pause_does_not_shorten_a_longer_one() -> None:
    clock = Clock()
    pacer = Pacer(8, clock)
    first, second = take(pacer, 2)
    assert pacer.throttled(first, 10.0) >= 0
    assert pacer.throttled(second, 2.0) == -1  # already held longer: acquire waits the rest
    clock.sleep(2.0)
    pacer.acquire(clock.sleep, slept=-1)
    assert clock.slept == [2.0, 8.0]


def test_rate_limit_headers_with_nothing_left_pause_new_calls() -> None:
    clock = Clock()
    pacer = Pacer(8, clock)
    pacer.read_headers({"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "1s"})
    assert pacer.pause_s() == 0.0
    pacer.read_headers({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2s"})
    assert pacer.pause_s() == 2.0 and pacer.try_acquire() is None
    assert pacer.limit == 8  # not a 429: the limit stays


def test_a_waiting_caller_gets_the_place_a_release_frees() -> None:
    pacer = Pacer(1, Clock())
    (held,) = take(pacer, 1)
    got: list[Slot] = []
    waiter = threading.Thread(target=lambda: got.append(pacer.acquire(lambda s: None)))
    waiter.start()
    waiter.join(timeout=0.05)
    assert waiter.is_alive() and not got  # no place while the first call is in flight
    pacer.succeeded(held)
    waiter.join(timeout=10)
    assert got and pacer.in_flight == 1


def test_clients_of_one_endpoint_and_model_share_a_pacer_and_others_do_not() -> None:
    pacers = Pacers(Clock())
    generator = pacers.get("http://host/v1", "gen", 4)
    assert pacers.get("http://host/v1", "gen", 4) is generator
    judge = pacers.get("http://host/v1", "judge", 4)
    other = pacers.get("http://other/v1", "gen", 4)
    assert judge is not generator and other is not generator
    (slot,) = take(generator, 1)
    generator.throttled(slot, None)
    assert generator.limit == 3 and judge.limit == 4


def test_a_higher_ceiling_raises_an_uncut_limit_at_once_and_a_cut_one_slowly() -> None:
    pacers = Pacers(Clock())
    pacer = pacers.get("u", "m", 4)
    pacers.get("u", "m", 16)
    assert pacer.ceiling == 16 and pacer.limit == 16
    (slot,) = take(pacer, 1)
    pacer.throttled(slot, None)  # 12
    pacers.get("u", "m", 32)
    assert pacer.ceiling == 32 and pacer.limit == 12
    pacers.get("u", "m", 2)  # a lower ceiling joins: the pool keeps the higher one
    assert pacer.ceiling == 32


def test_the_stats_series_starts_at_the_mark_and_is_capped() -> None:
    clock = Clock()
    pacer = Pacer(4, clock)
    (slot,) = take(pacer, 1)
    pacer.throttled(slot, None)  # 3, before the client's mark
    mark = pacer.mark()
    clock.now += 1.5
    (slot,) = take(pacer, 1)
    pacer.throttled(slot, None)  # 2
    clock.now += 0.25
    for _ in range(SUCCESSES_PER_STEP):
        (slot,) = take(pacer, 1)
        pacer.succeeded(slot)  # 3
    block = summary(pacer, mark, 4, rate_limited=1)
    assert block["series"] == [[0.0, 3], [1.5, 2], [1.75, 3]]
    assert (block["final"], block["min"], block["max"]) == (3, 2, 3)
    assert block["rate_limited"] == 1 and "series_left_out" not in block

    for _ in range(SERIES_POINTS):  # many changes: the first and last halves are kept
        clock.now += 1
        (slot,) = take(pacer, 1)
        pacer.throttled(slot, None)
        for _ in range(SUCCESSES_PER_STEP):
            (slot,) = take(pacer, 1)
            pacer.succeeded(slot)
    block = summary(pacer, mark, 4, rate_limited=0)
    assert len(block["series"]) == SERIES_POINTS
    assert block["series"][:3] == [[0.0, 3], [1.5, 2], [1.75, 3]]
    # the mark, 2 changes, then a cut and a step a round: all but SERIES_POINTS left out
    assert block["series_left_out"] == 1 + 2 + 2 * SERIES_POINTS - SERIES_POINTS
    assert block["series"][-1][0] == pytest.approx(clock.now - mark.time)
