"""Shared fixtures."""

from __future__ import annotations

import random

import pytest

from pipelines.settings import Params, load_params
from tests.support.snapshot import ROOT, SNAPSHOT_XML


@pytest.fixture(scope="session")
def params() -> Params:
    """The project's own params.yaml."""
    return load_params(ROOT / "params.yaml")


@pytest.fixture()
def no_network():
    """The socket guard: use ``with no_network(): ...`` around code that must stay offline."""
    from tests.support.network import no_network as guard

    return guard


@pytest.fixture(scope="module")
def no_network_module():
    """The socket guard, for module-scoped fixtures."""
    from tests.support.network import no_network as guard

    return guard


@pytest.fixture(scope="session")
def passages() -> list[str]:
    """120 passages of 5 to 400 words (some past MiniLM's 256-token limit)."""
    words = SNAPSHOT_XML.read_text().split()
    rng = random.Random(5)
    out = []
    for _ in range(120):
        start = rng.randrange(len(words) - 400)
        out.append(" ".join(words[start : start + rng.randint(5, 400)]))
    return out


@pytest.fixture(scope="session")
def snapshot_entries(tmp_path_factory: pytest.TempPathFactory, params: Params):
    """The snapshot's wikigen entries, built once (wiki, web and wikigen stages)."""
    from pipelines.stages.web import run_web
    from pipelines.stages.wiki import run_wiki
    from pipelines.stages.wikigen import run_wikigen

    tmp = tmp_path_factory.mktemp("snapshot-entries")
    articles = tmp / "wiki" / "articles.parquet"
    run_wiki(params.wiki, tmp / "wiki")
    run_web(params.sources, articles, tmp / "web")
    run_wikigen(params.wikigen, articles, tmp / "web" / "documents.parquet", tmp / "wikigen")
    return tmp / "wikigen" / "entries.parquet"


@pytest.fixture(scope="session")
def snapshot_chunks(snapshot_entries, tmp_path_factory: pytest.TempPathFactory, params: Params):
    """The chunks of the snapshot entries' web documents (chunk stage, web corpus only)."""
    from pipelines.stages.chunk import run_chunk

    out = tmp_path_factory.mktemp("snapshot-chunks")
    web = snapshot_entries.parent.parent / "web" / "documents.parquet"
    run_chunk(params.chunk.model_copy(update={"corpora": ["web"]}), {"web": web}, out)
    return out / "chunks.parquet"
