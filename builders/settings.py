"""The one base of every settings model: unknown keys are errors, values are immutable.

It sits at the bottom layer so that pure builders and the pipelines share it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Base for settings models: ``extra="forbid"`` (a misspelt key is an error that names it)
    and ``frozen`` (settings are read, never changed in place)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
