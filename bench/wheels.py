"""Reference packages from the package index, for benchmarks and tests, never installed.

A wheel is downloaded once into ``.cache/wheels`` (``pip download --no-deps``) and read from
there: pure-Python wheels import straight from the zip (:func:`importable`), and files inside any
wheel, such as the real Wikipedia dumps gensim ships for its tests, are extracted once
(:func:`member`).
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHEELS = ROOT / ".cache" / "wheels"


class WheelUnavailable(RuntimeError):
    """The package index could not supply the wheel."""


def wheel(requirement: str) -> Path:
    """The wheel of ``requirement`` (``name==version``), downloading it on first use."""
    name, _, version = requirement.partition("==")
    pattern = f"{name.replace('-', '_')}-{version}*.whl"
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
                raise WheelUnavailable(f"{requirement}: {done.stderr.strip()[-300:]}")
    return found[-1]


def importable(requirement: str) -> Path:
    """Put the pure-Python wheel of ``requirement`` on ``sys.path`` and return it."""
    path = wheel(requirement)
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
    return path


def member(requirement: str, name: str) -> Path:
    """File ``name`` (a path inside the wheel) of ``requirement``'s wheel, extracted once."""
    source = wheel(requirement)
    target = WHEELS / source.name.removesuffix(".whl") / Path(name).name
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(target.suffix + ".part")
        with zipfile.ZipFile(source) as archive, archive.open(name) as data:
            partial.write_bytes(data.read())
        partial.replace(target)
    return target
