"""The ``wikigen`` settings: how entries are split."""

from __future__ import annotations

from pydantic import Field, StrictInt

from builders.settings import Strict


class WikigenSettings(Strict):
    """The ``wikigen`` stage: entries and their split."""

    seed: StrictInt = Field(2026, description="Seed of the split hash.")
    test_fraction: float = Field(
        0.25, ge=0, le=1, description="Share of events in test (WikiGenBench: 309 of 1,320)."
    )
