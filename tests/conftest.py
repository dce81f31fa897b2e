"""Shared fixtures."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pipelines.settings import Params, load_params
from tests.support.snapshot import ROOT, SNAPSHOT_XML


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups for pytest-xdist's ``--dist loadgroup`` (what ``make test`` runs): a module runs
    whole on one worker, so its module fixtures are built once; every test that talks to the
    SmolLM server, or reads the publish export, shares one worker, so those session fixtures
    start once."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if "server" in names:
            group = "smollm"
        elif names & {"publish_data", "hub_export"}:
            group = "publish"
        else:
            group = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def params(tmp_path_factory: pytest.TempPathFactory) -> Params:
    """The project's own params.yaml, with the LLM and embedding caches in a temporary folder:
    tests never write to the developer's real caches under ``.cache/``."""
    loaded = load_params(ROOT / "params.yaml")
    caches = tmp_path_factory.mktemp("caches")
    return loaded.model_copy(
        update={
            "llm": loaded.llm.model_copy(update={"cache": caches / "llm.sqlite"}),
            "embed": loaded.embed.model_copy(update={"cache": caches / "embeddings.sqlite"}),
        }
    )


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
def snapshot_data(tmp_path_factory: pytest.TempPathFactory, params: Params) -> Path:
    """A ``data/`` folder with the snapshot's wiki, web and wikigen outputs, built once per test
    session; tests only read it (copy it before changing anything)."""
    from pipelines.stages.web import run_web
    from pipelines.stages.wiki import run_wiki
    from pipelines.stages.wikigen import run_wikigen

    data = tmp_path_factory.mktemp("snapshot") / "data"
    articles = data / "wiki" / "articles.parquet"
    run_wiki(params.wiki, out=data / "wiki")
    run_web(params.web, articles=articles, out=data / "web")
    run_wikigen(
        params.wikigen,
        articles=articles,
        documents=data / "web" / "documents.parquet",
        out=data / "wikigen",
    )
    return data


@pytest.fixture(scope="session")
def snapshot_entries(snapshot_data: Path) -> Path:
    """The snapshot's wikigen entries (wiki, web and wikigen stages)."""
    return snapshot_data / "wikigen" / "entries.parquet"


@pytest.fixture(scope="session")
def snapshot_haystacks(snapshot_data: Path, params: Params, tmp_path_factory) -> Path:
    """The snapshot's SummHay haystacks (summhay stage, template backend), built once."""
    from pipelines.stages.summhay import run_summhay

    out = tmp_path_factory.mktemp("snapshot-summhay") / "summhay"
    run_summhay(
        params.summhay,
        articles=snapshot_data / "wiki" / "articles.parquet",
        documents=snapshot_data / "web" / "documents.parquet",
        out=out,
        llm=params.llm,
    )
    return out / "haystacks.parquet"


@pytest.fixture(scope="session")
def snapshot_chunks(snapshot_data: Path, tmp_path_factory, params: Params) -> Path:
    """The chunks of the snapshot entries' web documents (chunk stage, web corpus only)."""
    from pipelines.stages.chunk import run_chunk

    out = tmp_path_factory.mktemp("snapshot-chunks")
    run_chunk(
        params.chunk.model_copy(update={"corpora": ["web"]}),
        documents=snapshot_data / "web" / "documents.parquet",
        haystacks=snapshot_data / "summhay" / "haystacks.parquet",
        out=out,
    )
    return out / "chunks.parquet"
