"""The snapshot's stage outputs, built once, and their Hub export."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipelines.embed.settings import ChunkSettings, EmbedSettings
from pipelines.publish.settings import PublishSettings
from pipelines.settings import Params
from tests.support.snapshot import ROOT


@pytest.fixture(scope="session")
def snapshot_data(snapshot_entries: Path, params: Params, tmp_path_factory) -> Path:
    """A ``data/`` folder with every stage output the registered datasets read."""
    from pipelines.stages.chunk import run_chunk
    from pipelines.stages.embed import run_embed
    from pipelines.stages.lveval import run_lveval
    from pipelines.stages.summhay import run_summhay

    data = tmp_path_factory.mktemp("publish-data")
    built = snapshot_entries.parent.parent
    for stage in ("wiki", "web", "wikigen"):
        shutil.copytree(built / stage, data / stage)
    documents = data / "web" / "documents.parquet"
    run_summhay(
        params.summhay,
        params.llm,
        data / "summhay",
        articles_path=data / "wiki" / "articles.parquet",
        documents_path=documents,
    )
    run_chunk(
        ChunkSettings(corpora=["web", "summhay"]),
        {"web": documents, "summhay": data / "summhay" / "haystacks.parquet"},
        data / "chunk",
    )
    embed = EmbedSettings.model_validate({"cache": data.parent / "embed-cache.sqlite"})
    run_embed(embed, data / "chunk" / "chunks.parquet", data / "embed")
    run_lveval(
        params.lveval, params.llm, data / "wikigen" / "entries.parquet", data / "lveval", root=ROOT
    )
    return data


def publish_settings(tmp_path: Path, **overrides: object) -> PublishSettings:
    """The snapshot's publish settings with the repository's card templates."""
    return PublishSettings.model_validate({"cards": ROOT / "cards", **overrides})


@pytest.fixture(scope="session")
def hub_export(snapshot_data: Path, tmp_path_factory) -> Path:
    """``data/hub`` as the publish stage writes it (documents published as text)."""
    from pipelines.stages.publish import run_publish

    out = tmp_path_factory.mktemp("hub") / "hub"
    settings = publish_settings(out, namespace="benchsmith-test")
    run_publish(settings, snapshot_data, out, root=ROOT, params_file=ROOT / "params.yaml")
    return out
