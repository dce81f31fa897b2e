"""Fixtures for the LLM layer: a prompt folder of its own and settings pointing at a server."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pipelines.llm import LLMClient, LLMSettings, PromptLibrary, ResponseCache
from pipelines.llm.backends.openai_api import OpenAIBackend
from pipelines.llm.pacing import Pacers
from pipelines.llm.prompts import PROMPTS

PICK = """[system]
You answer with JSON only.
[user]
Name {{ n }} colours as {"colours": [...]}. Topic: {{ topic }}.
"""
OTHER = """[user]
Give a number for {{ topic }} as {"value": 1}.
"""


@pytest.fixture()
def prompts(tmp_path: Path) -> PromptLibrary:
    """Two test prompts plus the package's re-ask prompt."""
    root = tmp_path / "prompts"
    (root / "t").mkdir(parents=True)
    (root / "t" / "pick.j2").write_text(PICK)
    (root / "t" / "other.j2").write_text(OTHER)
    shutil.copy(PROMPTS / "reask.j2", root / "reask.j2")
    return PromptLibrary(root)


def settings_for(base_url: str, tmp_path: Path, **overrides: object) -> LLMSettings:
    """openai-backend settings for a local server, with fast retries and a cache in tmp_path."""
    values: dict[str, object] = {
        "backend": "openai",
        "base_url": base_url,
        "model": "local-test",
        "retries": 2,
        "backoff_s": 0.01,
        "timeout_s": 5,
        "reasks": 1,
        "concurrency": 4,
        "cache": tmp_path / "cache" / "llm.sqlite",
    }
    values.update(overrides)
    return LLMSettings.model_validate(values)


def client_for(url: str, tmp_path: Path, prompts: PromptLibrary, **overrides: Any) -> LLMClient:
    """A client of :func:`settings_for`'s settings whose backoff waits are recorded in
    ``client.waits``, not slept, and whose pacer is its own (a later server may reuse the
    port, hence the endpoint, of an earlier one)."""
    settings = settings_for(url, tmp_path, **overrides)
    waits: list[float] = []
    client = LLMClient(
        settings,
        OpenAIBackend(settings),
        cache=ResponseCache(settings.cache),
        prompts=prompts,
        sleep=waits.append,
        pacers=Pacers(),
    )
    client.waits = waits  # type: ignore[attr-defined]
    return client
