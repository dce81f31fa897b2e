"""A temporary copy of the tracked project, and `dvc` run in it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.snapshot import ROOT

CANARY = "AIzaCANARY-dvc-0123456789abcdefghijklmnop"
"""Set as GOOGLE_API_KEY for every dvc run; it must never reach an output or dvc.lock."""
DVC_TIMEOUT_S = 3600
"""Cap on one dvc command. A full `dvc repro` takes minutes on an idle machine and many times
that with other test workers on two cores; the cap only stops a hung run."""


def project_files() -> list[str]:
    """The project's tracked and new (not ignored) files."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [f for f in listed if (ROOT / f).is_file()]


def copy_project(target: Path, *, lock: bool) -> Path:
    """Copy the project into ``target`` as its own git repository (with dvc.lock if ``lock``)."""
    for name in project_files():
        if name == "dvc.lock" and not lock:
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)
    subprocess.run(["git", "init", "-q"], cwd=target, check=True)
    return target


def dvc(project: Path, *args: str) -> str:
    """Run ``dvc args`` in ``project`` with the venv's tools first on PATH; return its output."""
    return tool(project, "dvc", *args)


def tool(project: Path, name: str, *args: str) -> str:
    """Run the venv's ``name`` (dvc, benchsmith) with ``args`` in ``project``, the venv's tools
    first on PATH and the canary key set; return its output (it must succeed)."""
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "DVC_NO_ANALYTICS": "1",
        "GOOGLE_API_KEY": CANARY,
    }
    result = subprocess.run(
        [str(Path(sys.executable).parent / name), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=DVC_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr
