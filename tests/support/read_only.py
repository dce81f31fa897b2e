"""Run a command while a folder is really read-only, for the user and for root alike.

A folder without write permission (``chmod 555``) stops an ordinary user, but root writes through
it. For root the command runs in its own user and mount namespace (``unshare -rm``) with a
read-only tmpfs mounted on the folder: writes there fail with EROFS, as on a read-only disk.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

MOUNT = 'mount -t tmpfs -o ro benchsmith-read-only "$0"'


def benchsmith(*args: str) -> list[str]:
    """The command line of the environment's ``benchsmith`` with ``args``."""
    return [str(Path(sys.executable).parent / "benchsmith"), *args]


def run_read_only(folder: Path, command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run ``command`` while ``folder`` cannot be written; skip when this machine cannot make it
    so (root without user namespaces)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            return subprocess.run(list(command), capture_output=True, text=True, check=False)
        finally:
            folder.chmod(0o755)
    unshare = shutil.which("unshare")
    probe = [unshare or "unshare", "-rm", "sh", "-c", MOUNT, str(folder)]
    if unshare is None or subprocess.run(probe, capture_output=True, check=False).returncode:
        pytest.skip("running as root, and no read-only mount can be made (unshare -rm failed)")
    return subprocess.run(
        [unshare, "-rm", "sh", "-c", f'{MOUNT} && exec "$@"', str(folder), *command],
        capture_output=True,
        text=True,
        check=False,
    )
