"""Shared fixtures."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.settings import Params, load_params
from tests.support.snapshot import ROOT, SNAPSHOT_XML

SHARED_WORKER = {
    "tests/integration/test_summhay_real_model.py": "smollm",
    "tests/integration/test_wikigen_real_model.py": "smollm",
    "tests/integration/test_lveval_real_model.py": "smollm",
    "tests/integration/test_constrained_server.py": "smollm",
    "tests/integration/test_estimate_real_model.py": "smollm",
}
"""Modules that must share one pytest-xdist worker, so one SmolLM server starts."""


def worker_group(module: str) -> str:
    """The unit pytest-xdist gives to one worker: a module, or a group of modules that share a
    session fixture (SmolLM, the publish export)."""
    if module.startswith("tests/pipelines/publish/"):
        return "publish"
    return SHARED_WORKER.get(module, module)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``make test`` runs one worker per core; each module (or group) runs whole on one."""
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid.split("::")[0])

    return ByModule(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse a test that starts the SmolLM server outside the modules that share a worker."""
    for item in items:
        module = item.nodeid.split("::")[0]
        uses_smollm = "server" in getattr(item, "fixturenames", ()) and "integration" in module
        if uses_smollm and worker_group(module) != "smollm":
            raise pytest.UsageError(f"{module} uses the SmolLM server: add it to SHARED_WORKER")


def _cache_files() -> dict[str, tuple[int, int]]:
    """Modification time and size of every file in the developer's LLM and embedding caches."""
    found = {}
    for folder in (ROOT / ".cache" / "llm", ROOT / ".cache" / "embeddings"):
        for path in folder.rglob("*") if folder.is_dir() else ():
            if path.is_file():
                stat = path.stat()
                found[str(path)] = (stat.st_mtime_ns, stat.st_size)
    return found


@pytest.fixture(scope="session", autouse=True)
def real_caches_untouched():
    """Fail the session when a test wrote to the LLM or embedding cache under ``.cache/``."""
    before = _cache_files()
    yield
    assert _cache_files() == before, "a test wrote to the developer's caches under .cache/"


@pytest.fixture(scope="session")
def params(tmp_path_factory: pytest.TempPathFactory) -> Params:
    """The project's own params.yaml, with the LLM and embedding caches in a temporary folder:
    tests never write to the developer's real caches under ``.cache/``."""
    loaded = load_params(ROOT / "params.yaml")
    caches = tmp_path_factory.mktemp("caches")
    return loaded.model_copy(
        update={
            "llm": loaded.llm.model_copy(update={"cache": caches / "llm.sqlite"}),
            "embed": loaded.embed.model_copy(
                update={
                    "cache": caches / "embeddings.sqlite",
                    "calibration": caches / "calibration.json",
                }
            ),
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


@pytest.fixture(scope="session")
def lveval_data(
    tmp_path_factory: pytest.TempPathFactory, snapshot_entries: Path, params: Params
) -> Path:
    """A data folder holding eight LV-Eval records of each 2k-level file (lveval stage, template
    backend): small enough for a real model to answer them all."""
    from pipelines.stages.lveval import run_lveval

    data = tmp_path_factory.mktemp("lveval-data") / "data"
    built = data.parent / "built"
    settings = params.lveval.model_copy(update={"levels": ["2k"]})
    run_lveval(settings, entries=snapshot_entries, out=built, llm=params.llm, root=ROOT)
    records = data / "lveval" / "records"
    records.mkdir(parents=True)
    for path in sorted((built / "records").glob("*.parquet")):
        pq.write_table(pq.read_table(path).slice(0, 8), records / path.name)
    return data
