"""A tiny random BERT for pooling tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tiny_encoder import save_tiny_bert


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 2-layer BERT with MiniLM's tokenizer, saved to a folder."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))
