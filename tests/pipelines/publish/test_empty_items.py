"""The publish stage beside degenerate items: an entry without documents and a haystack without
documents are exported with the rest unchanged; a dataset whose stage kept no row is refused
with the stage named, not with a request to run it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.dag.invoke import Workspace, run_stage
from pipelines.errors import EmptyInputError
from pipelines.settings import Params
from pipelines.stages.publish import run_publish
from tests.pipelines.publish.conftest import publish_settings
from tests.support.snapshot import ROOT

CHANGED = ("wikigen", "summhay", "lveval")


def _data(publish_data: Path, folder: Path) -> Path:
    """``publish_data`` with the folders this module changes copied, the rest linked."""
    folder.mkdir()
    for stage in publish_data.iterdir():
        if stage.name in CHANGED:
            shutil.copytree(stage, folder / stage.name)
        else:
            (folder / stage.name).symlink_to(stage, target_is_directory=True)
    return folder


def _append(path: Path, row: dict[str, Any]) -> None:
    table = pq.read_table(path)
    pq.write_table(pa.concat_tables([table, pa.Table.from_pylist([row], table.schema)]), path)


def _rows(folder: Path) -> list[dict[str, Any]]:
    return [r for f in sorted(folder.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]


def test_items_without_documents_are_exported_and_the_rest_is_unchanged(
    publish_data: Path, hub_export: Path, tmp_path: Path
) -> None:
    data = _data(publish_data, tmp_path / "data")
    entries = data / "wikigen" / "entries.parquet"
    first = pq.read_table(entries).to_pylist()[0]
    _append(entries, first | {"event_id": "x:bare", "documents": [], "document_counts": []})
    haystacks = data / "summhay" / "haystacks.parquet"
    topic = pq.read_table(haystacks).to_pylist()[0]
    subtopics = [
        s | {"insights": [i | {"gold_document_ids": []} for i in s["insights"]]}
        for s in topic["subtopics"]
    ]
    _append(haystacks, topic | {"topic_id": "x-empty", "documents": [], "subtopics": subtopics})
    out = tmp_path / "publish"
    settings = publish_settings(
        out, namespace="benchsmith-test", datasets=["wikigenbench", "summhay"]
    )
    stats = run_publish(settings, data=data, out=out, root=ROOT, params_file=ROOT / "params.yaml")

    for dataset, config, key, odd in (
        ("wikigenbench", "entries", "event_id", "x:bare"),
        ("summhay", "haystacks", "topic_id", "x-empty"),
    ):
        before = _rows(hub_export / dataset / config)
        after = _rows(out / dataset / config)
        assert [r for r in after if r[key] != odd] == before
        (kept,) = [r for r in after if r[key] == odd]
        assert kept["documents"] == []
    saved = json.loads((hub_export / "stats.json").read_text())["counts"]
    assert stats.counts["wikigenbench_rows"] == saved["wikigenbench_rows"] + 1


def test_a_dataset_whose_stage_kept_no_row_names_that_stage(
    publish_data: Path, params: Params, tmp_path: Path
) -> None:
    data = _data(publish_data, tmp_path / "data")
    for path in (data / "lveval" / "records").glob("*.parquet"):
        pq.write_table(pq.read_table(path).slice(0, 0), path)
    only = params.model_copy(
        update={"publish": params.publish.model_copy(update={"datasets": ["lveval"]})}
    )
    with pytest.raises(EmptyInputError) as raised:
        run_stage("publish", only, Workspace(ROOT, ROOT / "params.yaml", data))
    message = str(raised.value)
    assert "dvc repro" not in message and "the lveval stage ran but produced none" in message
    assert f"{data / 'lveval' / 'records'}" in message
    assert f"its {data / 'lveval' / 'stats.json'} says what it kept and left out" in message
    # nothing of the run reaches its folder, and its scratch folder beside it is gone
    assert not (data / "publish").exists() or not any((data / "publish").iterdir())
    assert not list(data.glob(".publish.tmp-*"))
