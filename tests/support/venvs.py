"""Real consumers in virtualenvs of their own: a harness or validator installed from the package
index into ``.cache/venvs/``, without benchsmith, the way a benchmark user would have it.

A venv is built once per requirement set (named by its hash) under a lock, so parallel test
workers share it and a second run installs nothing. uv (a dev dependency) builds it where it is
installed, several times faster than pip on a cold cache; pip does otherwise. A test that needs
one is skipped, saying why, when the index cannot supply the packages.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.snapshot import ROOT

VENVS = ROOT / ".cache" / "venvs"
INSPECT_AI = [
    "inspect-ai==0.3.285", "datasets==5.2.0", "openai==3.57.0", "jinja2", "rouge-score",
    "bpe-openai==0.1.4",
]  # fmt: skip
"""Inspect AI as a user of an export has it: datasets for its hf/ loader and the task modules,
openai for an OpenAI-compatible server, and what the shipped prompts, scorers and token counts
(bpe-openai, for a window in an OpenAI encoding) import."""
LM_EVAL = ["lm-eval[api]==0.4.13"]
"""lm-evaluation-harness with its API models (no torch): it has datasets, jinja2, rouge-score.
Without bpe-openai, a window in cl100k_base is decided by the export's published counts alone."""
INSTALL_TIMEOUT_S = 1800.0
"""A cold install of a harness with torch takes minutes; far longer on a loaded machine."""


def venv_with(name: str, requirements: Sequence[str]) -> Path:
    """The ``bin`` folder of a venv holding ``requirements`` (built on first use); the test is
    skipped when the package index cannot supply them."""
    digest = hashlib.sha256("\n".join(sorted(requirements)).encode()).hexdigest()[:12]
    target = VENVS / f"{name}-{digest}"
    VENVS.mkdir(parents=True, exist_ok=True)
    with open(VENVS / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".installed").is_file():
            return target / "bin"
        shutil.rmtree(target, ignore_errors=True)
        install, env = _installer(target)
        done = subprocess.run(
            [*install, *requirements],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            env=env,
        )
        if done.returncode:
            shutil.rmtree(target, ignore_errors=True)
            pytest.skip(f"could not install {' '.join(requirements)}: {done.stderr[-300:]}")
        (target / ".installed").touch()
    return target / "bin"


def _installer(target: Path) -> tuple[list[str], dict[str, str]]:
    """Create the venv at ``target``; return the install command for it and its environment.

    uv reads its own settings, not pip's: a package index set for pip (``PIP_INDEX_URL``) is
    handed to it unless uv has one of its own."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    env = dict(os.environ)
    if uv is None:
        subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
        return [str(target / "bin" / "python"), "-m", "pip", "install", "-q"], env
    if "PIP_INDEX_URL" in env and not ({"UV_DEFAULT_INDEX", "UV_INDEX_URL"} & env.keys()):
        env["UV_DEFAULT_INDEX"] = env["PIP_INDEX_URL"]
    subprocess.run([uv, "venv", "-q", "--seed", "--python", sys.executable, str(target)],
                   check=True, env=env)  # fmt: skip
    return [uv, "pip", "install", "-q", "--python", str(target / "bin" / "python")], env
