"""The published layout selects what a user means without code: a config per LV-Eval level and
variant, question/answer columns named alike, a flat SummHay config, bounded row groups, licence
metadata per source, and ``dataset_info`` sizes in the ``datasets`` library's meaning."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from datasets import load_dataset
from huggingface_hub import DatasetCard

from pipelines.publish.export import config_sources, export_config
from pipelines.publish.registry import DATASETS, LICENSE_FILE, VARIANTS, ConfigSpec
from pipelines.publish.shards import ROW_GROUP_BYTES, arrow_nbytes, largest_prefix
from pipelines.publish.views import summhay_subtopics


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "datasets-cache"))


def card_yaml(folder: Path) -> dict:
    """The card's YAML metadata, with ``dataset_info`` as a list."""
    data = DatasetCard.load(folder / "README.md").data.to_dict()
    infos = data["dataset_info"]
    data["dataset_info"] = infos if isinstance(infos, list) else [infos]
    return data


def records(publish_data: Path) -> list[Path]:
    """The LV-Eval stage's record files, one per length level."""
    files = sorted((publish_data / "lveval/records").glob("*.parquet"))
    assert files
    return files


def test_every_lveval_level_and_variant_is_a_config_holding_only_that_variant(
    hub_export, publish_data
):
    folder = hub_export / "lveval"
    configs = [c["config_name"] for c in card_yaml(folder)["configs"]]
    expected = [f"{r.stem}_{v}" for r in records(publish_data) for v in VARIANTS]
    assert configs == [*expected, "qa"]
    default = [c["config_name"] for c in card_yaml(folder)["configs"] if c.get("default")]
    assert default == [expected[0]] and expected[0].endswith("_clean")
    for record in records(publish_data):
        variants = pq.read_table(record, columns=["variant"]).column("variant")
        for variant in VARIANTS:
            ds = load_dataset(str(folder), f"{record.stem}_{variant}", split="test")
            assert set(ds["variant"]) == {variant}
            assert ds.num_rows == pc.sum(pc.equal(variants, variant)).as_py() > 0


def test_group_order_lists_known_values_first_then_the_rest_sorted(tmp_path):
    pq.write_table(pa.table({"v": ["z", "kpr", "a", "clean", "kpr"]}), tmp_path / "lv_2k.parquet")
    spec = ConfigSpec("{stem}_{value}", "*.parquet", "", group_by="v", group_order=VARIANTS)
    names = [name for name, _, _ in config_sources(spec, tmp_path)]
    assert names == ["lv_2k_clean", "lv_2k_kpr", "lv_2k_a", "lv_2k_z"]


def test_question_and_answer_columns_are_named_alike_across_configs(hub_export):
    folder = hub_export / "lveval"
    for config in card_yaml(folder)["configs"]:
        ds = load_dataset(str(folder), config["config_name"], split="test")
        names = ds.column_names
        assert "question" in names and "input" not in names, config["config_name"]
        assert names.index("answer") == names.index("answers") + 1
        assert ds.features["answer"].dtype == "string"
        for row in ds:
            assert row["answer"] == (row["answers"][0] if row["answers"] else None)


def test_summhay_subtopics_is_one_row_per_topic_and_subtopic(hub_export, publish_data):
    haystacks = pq.read_table(publish_data / "summhay/haystacks.parquet").to_pylist()
    ds = load_dataset(str(hub_export / "summhay"), "subtopics", split="test")
    assert [c.get("default") for c in card_yaml(hub_export / "summhay")["configs"]] == [
        True,
        None,
    ]
    expected = [(h["topic_id"], s["subtopic_id"]) for h in haystacks for s in h["subtopics"]]
    assert [(r["topic_id"], r["subtopic_id"]) for r in ds] == expected
    by_topic = {h["topic_id"]: h for h in haystacks}
    for row in ds:
        haystack = by_topic[row["topic_id"]]
        subtopic = next(s for s in haystack["subtopics"] if s["subtopic_id"] == row["subtopic_id"])
        ids = [d["document_id"] for d in haystack["documents"]]
        assert row["query"] == subtopic["query"] and row["subtopic"] == subtopic["name"]
        assert row["document_ids"] == ids
        for n, document in enumerate(haystack["documents"], 1):
            assert f"Document {n}:\n{document['text']}" in row["context"]
        assert [i["insight_id"] for i in row["insights"]] == [
            i["insight_id"] for i in subtopic["insights"]
        ]
        for insight in row["insights"]:
            numbers = [ids.index(d) + 1 for d in insight["gold_document_ids"]]
            assert insight["gold_document_numbers"] == numbers


def test_the_subtopics_view_of_no_haystacks_is_empty_with_its_schema():
    empty = summhay_subtopics(pa.table({"topic_id": pa.array([], pa.string())}))
    assert empty.num_rows == 0 and "context" in empty.column_names


def test_largest_prefix_fits_the_cap_and_takes_at_least_one_row():
    table = pa.table({"text": ["x" * 100] * 10})
    row = table.slice(0, 1).nbytes
    assert largest_prefix(table, 3 * row) == 3
    assert largest_prefix(table, 1) == 1
    assert largest_prefix(table, 10**9) == 10


def test_row_groups_are_bounded_by_arrow_bytes(publish_data, tmp_path):
    source = publish_data / "lveval/records/events_mixup_8k.parquet"
    spec = ConfigSpec("contexts", "lveval/records/*.parquet", "records")
    cap = 100_000
    exported = export_config(
        "contexts",
        spec,
        source,
        None,
        {},
        publish_data,
        tmp_path,
        url_only=False,
        shard_bytes=10**9,
        group_bytes=cap,
    )
    (shard,) = exported.splits["test"].files
    parquet = pq.ParquetFile(tmp_path / shard)
    assert parquet.num_row_groups > 1
    for i in range(parquet.num_row_groups):
        group = parquet.read_row_group(i)
        assert group.nbytes <= cap or group.num_rows == 1, i
    assert parquet.metadata.num_rows == pq.read_metadata(source).num_rows


def test_every_exported_row_group_is_within_the_default_cap(hub_export):
    for path in hub_export.rglob("*.parquet"):
        parquet = pq.ParquetFile(path)
        for i in range(parquet.num_row_groups):
            group = parquet.read_row_group(i)
            assert group.nbytes <= ROW_GROUP_BYTES or group.num_rows == 1, (path, i)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_licence_metadata_names_the_terms_of_every_source(hub_export, name):
    spec = DATASETS[name]
    data = card_yaml(hub_export / name)
    assert data["license"] == spec.license == "other"
    assert data["license_name"] == spec.license_name
    assert data["license_link"] == LICENSE_FILE
    licence = (hub_export / name / LICENSE_FILE).read_text("utf-8")
    body = DatasetCard.load(hub_export / name / "README.md").text
    licensing = body[body.index("## Licensing") :]
    assert spec.license_terms
    for what, terms in spec.license_terms:
        assert f"| {what} | {terms} |" in licence
        assert f"| {what} | {terms} |" in licensing


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_dataset_info_sizes_are_what_datasets_computes(hub_export, name):
    folder = hub_export / name
    for info in card_yaml(folder)["dataset_info"]:
        config = info["config_name"]
        files = 0
        for split in info["splits"]:
            ds = load_dataset(str(folder), config, split=split["name"])
            assert split["num_bytes"] == ds.info.splits[split["name"]].num_bytes, (config, split)
            assert split["num_examples"] == ds.num_rows
            files += sum(p.stat().st_size for p in (folder / config).glob(f"{split['name']}-*"))
        assert info["download_size"] == files, config
        assert info["dataset_size"] == sum(s["num_bytes"] for s in info["splits"]), config


def test_arrow_nbytes_of_no_files_is_zero():
    assert arrow_nbytes([], pa.schema([("a", pa.string())])) == 0
