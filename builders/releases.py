"""Releases of a benchmark and the release each event first appeared in.

A release is a version and the last creation day its window covered (``wiki.created_before``
when it was built). The history is earlier releases, oldest first, then the current one; an
event first appeared in the first release whose window reached its creation day. That is a pure
function of the event's creation date and the history, so a rebuild from a clean checkout gives
every item the same first release, and an item's LV-Eval distractor pool (the events created by
its first release's last day) never grows when later events arrive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from itertools import pairwise


@dataclass(frozen=True)
class Release:
    """One release: its version and the last creation day (UTC, inclusive) it covered."""

    version: str
    until: date


def check_history(releases: Sequence[Release]) -> None:
    """Raise ValueError unless versions are unique and windows end in increasing order."""
    seen: set[str] = set()
    for earlier, later in pairwise(releases):
        if later.until <= earlier.until:
            raise ValueError(
                f"release {later.version} covers up to {later.until}, not after release "
                f"{earlier.version} (up to {earlier.until}); list releases oldest first"
            )
    for release in releases:
        if release.version in seen:
            raise ValueError(f"release {release.version} is listed twice")
        seen.add(release.version)


def day_of(created_at: datetime | date | str) -> date:
    """The UTC day of a creation timestamp (an ISO string is parsed)."""
    if isinstance(created_at, str):
        created_at = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    return created_at.date() if isinstance(created_at, datetime) else created_at


def first_release(created_at: datetime | date | str | None, releases: Sequence[Release]) -> Release:
    """The release an event created at ``created_at`` first appeared in: the first whose window
    reached that day, the last release when none did. Items without an event (hand-written
    topics, QA sets from the Hub) have no date and count from the first release."""
    if not releases:
        raise ValueError("no release to assign (the history is empty)")
    if created_at is None:
        return releases[0]
    day = day_of(created_at)
    return next((r for r in releases if day <= r.until), releases[-1])
