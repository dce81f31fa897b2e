"""The snapshot's stage outputs, built once, and their Hub export."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipelines.embed.settings import ChunkSettings
from pipelines.publish.registry import RR_RERANKER
from pipelines.publish.settings import PublishSettings
from pipelines.settings import Params
from tests.support.shared import built_once
from tests.support.snapshot import ROOT

DENSE_VECTORS = "dense-vectors.sqlite"
"""Beside ``publish_data``: the dense reranker's vectors of the snapshot's web chunks (the
embedding cache of its RR run), which the wikigen_baselines stage tests read instead of
embedding the same chunks again."""


@pytest.fixture(scope="session")
def publish_data(
    snapshot_data: Path, snapshot_haystacks: Path, params: Params, tmp_path_factory
) -> Path:
    """A ``data/`` folder with every stage output the registered datasets read, built once per
    test run for every worker; tests only read it."""
    from pipelines.stages.chunk import run_chunk
    from pipelines.stages.embed import run_embed
    from pipelines.stages.lveval import run_lveval
    from pipelines.stages.wikigen_baselines import run_wikigen_baselines

    def build(folder: Path) -> None:
        data = folder / "data"
        for stage in ("wiki", "web", "wikigen"):
            shutil.copytree(snapshot_data / stage, data / stage)
        shutil.copytree(snapshot_haystacks.parent, data / "summhay")
        documents = data / "web" / "documents.parquet"
        run_chunk(
            ChunkSettings(corpora=["web", "summhay"]),
            documents=documents,
            haystacks=data / "summhay" / "haystacks.parquet",
            out=data / "chunk",
        )
        run_embed(params.embed, chunks=data / "chunk" / "chunks.parquet", out=data / "embed")
        # the rr_contexts config's source: the RR contexts of its reranker (no articles written)
        rr = params.wikigen_baselines.model_copy(
            update={"retrievers": [RR_RERANKER], "methods": ["rr"], "generate": False}
        )
        reranked = folder / "wikigen-baselines"
        run_wikigen_baselines(
            rr,
            entries=data / "wikigen" / "entries.parquet",
            chunks=data / "chunk" / "chunks.parquet",
            out=reranked,
            llm=params.llm,
            retrieval=params.resolved_retrieval(),
            embed_cache=folder / DENSE_VECTORS,
        )
        (data / "wikigen_baselines").mkdir()
        shutil.copy(reranked / "retrieval.parquet", data / "wikigen_baselines")
        run_lveval(
            params.lveval,
            entries=data / "wikigen" / "entries.parquet",
            out=data / "lveval",
            llm=params.llm,
            root=ROOT,
        )

    return built_once(tmp_path_factory, "publish-data", build) / "data"


def publish_settings(tmp_path: Path, **overrides: object) -> PublishSettings:
    """The snapshot's publish settings with the repository's card templates."""
    return PublishSettings.model_validate({"cards": ROOT / "cards", **overrides})


@pytest.fixture(scope="session")
def hub_export(publish_data: Path, tmp_path_factory) -> Path:
    """``data/publish`` as the publish stage writes it (documents published as text), built once
    per test run for every worker."""
    from pipelines.stages.publish import run_publish

    def build(folder: Path) -> None:
        out = folder / "publish"
        settings = publish_settings(out, namespace="benchsmith-test")
        run_publish(
            settings, data=publish_data, out=out, root=ROOT, params_file=ROOT / "params.yaml"
        )

    return built_once(tmp_path_factory, "hub-export", build) / "publish"
