"""What the judge-check tests share: a project folder for the command, the template judge's
settings, and writing JSONL labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipelines.llm import LLMSettings
from tests.support.snapshot import ROOT


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    """``lines`` as JSONL at ``path``."""
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return path


def template(tmp_path: Path) -> LLMSettings:
    """The template backend (the baselines' offline judges), its cache under ``tmp_path``."""
    return LLMSettings(backend="template", cache=tmp_path / "cache" / "llm.sqlite")


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the project's params.yaml (LLM cache under it) and its snapshot."""
    data = yaml.safe_load((ROOT / "params.yaml").read_text("utf-8"))
    data["llm"]["cache"] = "cache/llm.sqlite"
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data), "utf-8")
    (tmp_path / "snapshot").symlink_to(ROOT / "snapshot")
    monkeypatch.chdir(tmp_path)
    return tmp_path
