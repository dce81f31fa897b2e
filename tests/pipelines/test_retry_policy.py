"""The one retry policy every client uses."""

from __future__ import annotations

from pipelines.retry import RetryPolicy


def test_backoff_doubles_with_jitter_and_stops_after_the_retries() -> None:
    policy = RetryPolicy(retries=3, backoff_s=2.0)
    for attempt in range(3):
        wait = policy.wait_s(attempt)
        assert wait is not None and 2.0 * 2**attempt / 2 <= wait < 2.0 * 2**attempt
        assert not policy.exhausted(attempt)
    assert policy.wait_s(3) is None and policy.exhausted(3)


def test_what_the_server_asks_is_waited_unless_it_is_too_long() -> None:
    policy = RetryPolicy(retries=2, max_retry_after_s=30.0)
    assert policy.wait_s(0, 7.0) == 7.0
    assert policy.wait_s(0, 30.0) == 30.0
    assert policy.wait_s(0, 31.0) is None  # give up rather than stall the stage
    assert policy.wait_s(2, 1.0) is None  # retries used up
