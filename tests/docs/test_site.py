"""The documentation site builds in strict mode, offline, with every key page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.snapshot import ROOT

pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]') is not installed")

PAGES = (
    "index.html",
    "pipeline.html",
    "sources.html",
    "llm.html",
    "embedding.html",
    "families/wikigen.html",
    "families/summhay.html",
    "families/lveval.html",
    "families/leval.html",
    "publishing.html",
    "refreshing.html",
    "metrics.html",
    "performance.html",
    "settings/index.html",
    "settings/wiki.html",
    "settings/llm.html",
    "guides/new-family.html",
    "reference/builders.html",
    "reference/scoring.html",
    "reference/pipelines.html",
)


def test_the_site_builds_strict_and_offline(tmp_path: Path) -> None:
    site = tmp_path / "site"
    # any attempt at the network goes to a closed port and fails the build
    closed = "http://127.0.0.1:9"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HTTP_PROXY": closed,
        "HTTPS_PROXY": closed,
        "http_proxy": closed,
        "https_proxy": closed,
        "NO_PROXY": "",
        "no_proxy": "",
        "HF_HUB_OFFLINE": "1",
        "NO_MKDOCS_2_WARNING": "1",
    }
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr, done.stderr[-4000:]
    for page in PAGES:
        assert (site / page).is_file(), f"{page} was not built"
    settings = (site / "settings" / "wiki.html").read_text("utf-8")
    assert "created_before" in settings and "Also read by" in settings
    family = (site / "families" / "lveval.html").read_text("utf-8")
    assert "pipelines/stages/lveval.py" in family
    reference = (site / "reference" / "scoring.html").read_text("utf-8")
    assert "benchsmith_scoring.lveval" in reference
    # no font or script is fetched from another host when the page is read
    home = (site / "index.html").read_text("utf-8")
    assert "fonts.googleapis.com" not in home and "fonts.gstatic.com" not in home
