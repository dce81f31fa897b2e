"""Releases: an event's first release follows from its creation day and the history alone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from builders.releases import Release, check_history, first_release

HISTORY = [
    Release("2026.6.0", date(2026, 5, 31)),
    Release("2026.9.0", date(2026, 8, 31)),
    Release("2026.11.0", date(2026, 10, 31)),
]


@pytest.mark.parametrize(
    ("created", "version"),
    [
        (datetime(2026, 1, 19, 7, 45, tzinfo=UTC), "2026.6.0"),
        (datetime(2026, 5, 31, 23, 59, tzinfo=UTC), "2026.6.0"),  # the last day is inside
        (datetime(2026, 6, 1, 0, 0, tzinfo=UTC), "2026.9.0"),
        ("2026-10-31T12:00:00Z", "2026.11.0"),
        (date(2026, 9, 1), "2026.11.0"),
        (datetime(2027, 1, 1, tzinfo=UTC), "2026.11.0"),  # past every window: the last release
        (None, "2026.6.0"),  # no event: counts from the first release
    ],
)
def test_an_event_first_appears_in_the_first_release_whose_window_reached_it(created, version):
    assert first_release(created, HISTORY).version == version


def test_a_longer_history_never_changes_an_earlier_event_s_first_release():
    later = [*HISTORY, Release("2027.1.0", date(2026, 12, 31))]
    for days in range(304):  # every day up to the last window's end
        created = datetime(2026, 1, 1, 12, tzinfo=UTC) + timedelta(days=days)
        assert first_release(created, later) == first_release(created, HISTORY)


def test_history_out_of_order_or_repeated_is_refused():
    with pytest.raises(ValueError, match=r"2026\.9\.0.*not after release 2026\.11\.0"):
        check_history([HISTORY[0], HISTORY[2], HISTORY[1]])
    with pytest.raises(ValueError, match="listed twice"):
        check_history([HISTORY[0], Release("2026.6.0", date(2026, 12, 31))])
    check_history(HISTORY)
    with pytest.raises(ValueError, match="history is empty"):
        first_release(None, [])
