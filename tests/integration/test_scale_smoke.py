"""The scale smoke test: a world grown twofold (recorded, then replayed offline) goes through the
building stages, and each stage's outputs are twice the snapshot's (the templates, read once, and
what depends on random draws aside). ``bench/scale.py`` runs the same at K = 10 and 100."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.settings import Params
from pipelines.snapshot.world import grow
from pipelines.stages.chunk import run_chunk
from pipelines.stages.lveval import run_lveval
from pipelines.stages.summhay import run_summhay
from pipelines.stages.web import run_web
from pipelines.stages.wiki import run_wiki
from pipelines.stages.wikigen import run_wikigen
from tests.conftest import ROOT

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def twofold(tmp_path_factory: pytest.TempPathFactory, params: Params) -> tuple[Path, Params]:
    """The snapshot grown twofold and recorded, and every building stage run on it."""
    base = tmp_path_factory.mktemp("scale")
    summary = grow(ROOT / "snapshot", base / "world", 2, params, seed=1)
    assert summary["recording"]["events"] == 26
    wiki, web = params.wiki, params.web
    local = params.model_copy(
        update={
            "wiki": wiki.model_copy(
                update={
                    "dump": wiki.dump.model_copy(update={"path": base / "world/wiki/export.xml"})
                }
            ),
            "web": web.model_copy(
                update={
                    "archive": base / "world/web/archive",
                    "search_log": base / "world/web/search.jsonl",
                }
            ),
        }
    )
    data = base / "data"
    articles, documents = data / "wiki/articles.parquet", data / "web/documents.parquet"
    run_wiki(local.wiki, out=data / "wiki")
    run_web(local.web, articles=articles, out=data / "web")
    run_wikigen(local.wikigen, articles=articles, documents=documents, out=data / "wikigen")
    summhay = local.summhay.model_copy(
        update={"topics_from_events": 2 * params.summhay.topics_from_events}
    )
    run_summhay(
        summhay, articles=articles, documents=documents, out=data / "summhay", llm=local.llm
    )
    chunk = local.chunk.model_copy(update={"corpora": ["web"]})
    run_chunk(
        chunk, documents=documents, haystacks=data / "summhay/haystacks.parquet", out=data / "chunk"
    )
    lveval = local.lveval.model_copy(update={"levels": ["2k"]})
    run_lveval(
        lveval,
        entries=data / "wikigen/entries.parquet",
        out=data / "lveval",
        llm=local.llm,
        root=ROOT,
    )
    return data, local


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def test_wiki_web_and_entries_double(twofold, snapshot_data: Path) -> None:
    data, _ = twofold
    assert len(_rows(data / "wiki/articles.parquet")) == 2 * len(
        _rows(snapshot_data / "wiki/articles.parquet")
    )
    once = Counter(r["reason"] for r in _rows(snapshot_data / "wiki/drops.parquet"))
    twice = Counter(r["reason"] for r in _rows(data / "wiki/drops.parquet"))
    assert twice == {k: v if k == "not_article" else 2 * v for k, v in once.items()}
    status = lambda path: Counter(r["status"] for r in _rows(path))  # noqa: E731
    assert status(data / "web/documents.parquet") == {
        k: 2 * v for k, v in status(snapshot_data / "web/documents.parquet").items()
    }
    entries = _rows(data / "wikigen/entries.parquet")
    assert len(entries) == 2 * len(_rows(snapshot_data / "wikigen/entries.parquet"))
    assert len({e["title"] for e in entries}) == len(entries)


def test_copies_are_not_duplicates_of_the_snapshot(twofold, snapshot_data: Path) -> None:
    data, _ = twofold
    once = {r["text"] for r in _rows(snapshot_data / "web/documents.parquet") if r["text"]}
    twice = [r["text"] for r in _rows(data / "web/documents.parquet") if r["text"]]
    fresh = [t for t in twice if t not in once]
    assert len(fresh) == len(twice) // 2  # the second copy's every text is its own


def test_summhay_chunks_and_lveval_grow_in_proportion(
    twofold, snapshot_haystacks: Path, snapshot_chunks: Path, lveval_data: Path
) -> None:
    data, _ = twofold
    haystacks = _rows(data / "summhay/haystacks.parquet")
    assert len(haystacks) == len(_rows(snapshot_haystacks)) + 2
    ratio = len(_rows(data / "chunk/chunks.parquet")) / len(_rows(snapshot_chunks))
    assert 1.9 <= ratio <= 2.1
    built = lveval_data.parent / "built"
    items = len(_rows(data / "lveval/qa.parquet")) / len(_rows(built / "qa.parquet"))
    assert 1.7 <= items <= 2.3
    for path in (data / "lveval/records").glob("*.parquet"):
        once = pq.ParquetFile(built / "records" / path.name).metadata.num_rows
        assert 1.7 <= pq.ParquetFile(path).metadata.num_rows / once <= 2.3, path.name
