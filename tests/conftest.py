"""Shared fixtures."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.settings import Params, load_params
from tests.support.shared import built_once
from tests.support.snapshot import ROOT, SNAPSHOT_XML

SHARED_WORKER = {
    "tests/integration/test_summhay_real_model.py": "smollm",
    "tests/integration/test_wikigen_real_model.py": "smollm",
    "tests/integration/test_lveval_real_model.py": "smollm",
    "tests/integration/test_constrained_server.py": "smollm",
    "tests/integration/test_estimate_real_model.py": "smollm",
    "tests/integration/test_validate_real_model.py": "smollm",
}
"""Modules that must share one pytest-xdist worker, so one SmolLM server starts."""


SLOWEST = (
    "tests/integration/test_dvc_pipeline.py",
    "tests/pipelines/publish/test_harness_runs.py",
    "smollm",
    "tests/integration/test_real_wikipedia.py",
    "tests/pipelines/embed/test_onnx.py",
    "tests/pipelines/publish/test_eval_yaml.py",
    "tests/pipelines/embed/test_encoder.py",
    "tests/pipelines/stages/test_embed_stage.py",
    "tests/pipelines/embed/test_calibrate.py",
    "tests/pipelines/stages/test_lveval_stage.py",
    "tests/integration/test_ray_executor.py",
    "tests/pipelines/sources/web/test_extract.py",
    "tests/pipelines/publish/test_croissant.py",
    "tests/pipelines/embed/test_memory.py",
    "tests/pipelines/stages/test_wikigen_baselines.py",
    "tests/pipelines/publish/test_contamination_card.py",
    "tests/pipelines/embed/test_openvino.py",
    "tests/pipelines/evaluation/test_meteor.py",
)
"""The units that take longest (measured with ``--durations``), longest first. ``make test``
starts them first, so that no long unit starts when the other worker is nearly done (the rest
follow in collection order); their tests are marked ``slow``, which the fast tier (``make
check``) leaves out with the integration tests. One exception to the order: a unit that reads
the Hub export comes after the harness runs by a unit or two, so that it does not wait idle
while the other worker builds the export."""


def worker_group(module: str) -> str:
    """The unit pytest-xdist gives to one worker: a module, or the modules that share the
    SmolLM server. Session outputs several units read (the snapshot's stage outputs, the Hub
    export) are built once for every worker (``tests.support.shared``)."""
    return SHARED_WORKER.get(module, module)


def _rank(item: pytest.Item) -> int:
    unit = worker_group(item.nodeid.split("::")[0])
    return SLOWEST.index(unit) if unit in SLOWEST else len(SLOWEST)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``make test`` runs one worker per core; each module (or group) runs whole on one, in the
    order of the collection (longest first, see ``SLOWEST``)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid.split("::")[0])

    # xdist otherwise orders units by their number of tests, which starts one-test units last
    config.option.loadscopereorder = False
    return ByModule(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the longest units first and mark their tests ``slow``; refuse a test that starts the
    SmolLM server outside the modules that share a worker."""
    for item in items:
        if _rank(item) < len(SLOWEST):
            item.add_marker(pytest.mark.slow)
        module = item.nodeid.split("::")[0]
        uses_smollm = "server" in getattr(item, "fixturenames", ()) and "integration" in module
        if uses_smollm and worker_group(module) != "smollm":
            raise pytest.UsageError(f"{module} uses the SmolLM server: add it to SHARED_WORKER")
    items.sort(key=_rank)


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
    run for every worker; tests only read it (copy it before changing anything)."""
    from pipelines.stages.web import run_web
    from pipelines.stages.wiki import run_wiki
    from pipelines.stages.wikigen import run_wikigen

    def build(folder: Path) -> None:
        data = folder / "data"
        articles = data / "wiki" / "articles.parquet"
        run_wiki(params.wiki, out=data / "wiki")
        run_web(params.web, articles=articles, out=data / "web")
        run_wikigen(
            params.wikigen,
            articles=articles,
            documents=data / "web" / "documents.parquet",
            out=data / "wikigen",
        )

    return built_once(tmp_path_factory, "snapshot", build) / "data"


@pytest.fixture(scope="session")
def snapshot_entries(snapshot_data: Path) -> Path:
    """The snapshot's wikigen entries (wiki, web and wikigen stages)."""
    return snapshot_data / "wikigen" / "entries.parquet"


@pytest.fixture(scope="session")
def snapshot_haystacks(snapshot_data: Path, params: Params, tmp_path_factory) -> Path:
    """The snapshot's SummHay haystacks (summhay stage, template backend), built once per run."""
    from pipelines.stages.summhay import run_summhay

    def build(folder: Path) -> None:
        run_summhay(
            params.summhay,
            articles=snapshot_data / "wiki" / "articles.parquet",
            documents=snapshot_data / "web" / "documents.parquet",
            out=folder / "summhay",
            llm=params.llm,
        )

    return built_once(tmp_path_factory, "snapshot-summhay", build) / "summhay" / "haystacks.parquet"


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
