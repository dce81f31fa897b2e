"""The reference panel's labels in the export: every row of a validated item carries its
labels, the items ``validate.min_solvable`` dropped leave every config, and the card reports
the levels per config and release and the noise floor."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipelines.evaluation.validate_settings import ValidateSettings
from pipelines.settings import Params
from pipelines.stages.publish import run_publish
from pipelines.stages.validate import run_validate
from tests.pipelines.publish.conftest import publish_settings
from tests.support.snapshot import ROOT


def _rows(export: Path, config: str) -> list[dict[str, Any]]:
    files = sorted(glob.glob(str(export / config / "**" / "*.parquet"), recursive=True))
    return [r for f in files for r in pq.read_table(f).to_pylist()]


def test_labels_reach_every_row_and_unsolvable_items_leave_every_config(
    publish_data: Path, params: Params, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for stage in publish_data.iterdir():
        (data / stage.name).symlink_to(stage)
    settings = ValidateSettings(datasets=["lveval", "summhay"], min_solvable=1.0)
    llm = params.llm.model_copy(update={"cache": tmp_path / "llm.sqlite"})
    run_validate(
        settings, qa=data / "lveval" / "qa.parquet", entries=data / "wikigen" / "entries.parquet",
        chunks=data / "chunk" / "chunks.parquet", haystacks=data / "summhay" / "haystacks.parquet",
        out=data / "validate", llm=llm, ak=params.lveval_baselines,
    )  # fmt: skip
    labels = {(r["dataset"], r["item_id"]): r for r in pq.read_table(
        data / "validate" / "labels.parquet").to_pylist()}  # fmt: skip
    dropped = {i for (d, i), r in labels.items() if d == "lveval" and r["status"] == "dropped"}
    kept = {i for (d, i), r in labels.items() if d == "lveval" and r["status"] == "kept"}
    assert dropped and kept  # the template misses some items with their evidence

    out = tmp_path / "publish"
    run_publish(
        publish_settings(tmp_path, datasets=["lveval", "summhay"], namespace="benchsmith-test"),
        data=data, out=out, root=ROOT, params_file=ROOT / "params.yaml",
    )  # fmt: skip
    export = out / "lveval"
    record = json.loads((export / "release.json").read_text())
    for config in record["configs"]:
        rows = _rows(export, config)
        assert {r["qa_id"] for r in rows} <= kept and rows, config
        for row in rows:
            label = labels[("lveval", row["qa_id"])]
            assert (row["solvable"], row["closed_book"], row["difficulty"]) == (
                label["solvable"], label["closed_book"], label["difficulty"]
            )  # fmt: skip
    card = (export / "README.md").read_text()
    assert "### Validation by a reference panel" in card
    assert f"Left out: {len(dropped)} unsolvable (`validate.min_solvable` 1.0)." in card
    assert f"| qa | {len(kept)} | 0 | 0 | 0 | 0 |" in card  # the kept are all easy
    assert "Noise floor: with another item's evidence" in card

    subtopics = _rows(out / "summhay", "subtopics")
    insights = [i for row in subtopics for i in row["insights"]]
    assert insights
    for row in subtopics:
        for insight in row["insights"]:
            label = labels[("summhay", f"{row['topic_id']}/{insight['insight_id']}")]
            assert label["status"] == "kept"
            assert (insight["solvable"], insight["difficulty"]) == (
                label["solvable"], label["difficulty"]
            )  # fmt: skip
            # the panel answers SummHay with the documents only: no closed_book column
            assert "closed_book" not in insight
        assert row["reference"] == "\n".join(f"- {i['text']}" for i in row["insights"])
    haystacks = _rows(out / "summhay", "haystacks")
    assert all("difficulty" in i for h in haystacks for s in h["subtopics"] for i in s["insights"])
