"""Integration fixtures: one real LLM server for every module that needs it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.smollm import SmolLMServer
from tests.support.snapshot import ROOT


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmolLMServer]:
    """`transformers serve` with SmolLM2-135M-Instruct on 127.0.0.1, started once."""
    with SmolLMServer(tmp_path_factory.mktemp("smollm"), ROOT / ".cache") as running:
        yield running
