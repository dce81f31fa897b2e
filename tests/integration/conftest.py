"""Integration fixtures: one real LLM server for every module that needs it, and a real
MediaWiki holding the snapshot for each module that reads a live wiki."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.mediawiki import MediaWikiServer
from tests.support.smollm import SmolLMServer
from tests.support.snapshot import ROOT, SNAPSHOT_XML


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmolLMServer]:
    """SmolLM2-135M-Instruct behind the schema-enforcing OpenAI-compatible server
    (tests.support.constrained_server) on 127.0.0.1, started once, its speed measured."""
    with SmolLMServer(tmp_path_factory.mktemp("smollm"), ROOT / ".cache") as running:
        yield running


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MediaWikiServer]:
    """A real MediaWiki on 127.0.0.1 holding the snapshot; stopped by process group."""
    server = MediaWikiServer(
        SNAPSHOT_XML, tmp_path_factory.mktemp("mediawiki"), ROOT / ".cache" / "mediawiki"
    )
    with server:
        yield server
