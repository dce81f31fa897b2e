"""The Hub export as consumers see it: load_dataset on every declared config and split, the
card's metadata, eval.yaml, and a round trip back to the stage outputs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import yaml
from datasets import Features, load_dataset
from huggingface_hub import DatasetCard

from pipelines.errors import ParamsError, PublishError
from pipelines.publish.dating import COLUMNS as DATING
from pipelines.publish.export import export_config
from pipelines.publish.registry import DATASETS, VARIANTS, ConfigSpec
from pipelines.publish.rows import drop_path
from pipelines.publish.statistics import NAMED
from pipelines.settings import load_params
from tests.pipelines.publish.conftest import publish_settings
from tests.support.snapshot import ROOT


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "datasets-cache"))


def declared(folder: Path) -> list[tuple[str, str, Features, int]]:
    """``(config, split, features, rows)`` as the card's YAML declares them."""
    card = DatasetCard.load(folder / "README.md")
    infos = card.data.to_dict()["dataset_info"]
    infos = infos if isinstance(infos, list) else [infos]
    out = []
    for config in card.data.to_dict()["configs"]:
        info = next(i for i in infos if i["config_name"] == config["config_name"])
        features = Features._from_yaml_list(info["features"])
        rows = {s["name"]: s["num_examples"] for s in info["splits"]}
        for files in config["data_files"]:
            out.append((config["config_name"], files["split"], features, rows[files["split"]]))
    return out


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_declared_config_and_split_loads_with_its_features_and_rows(hub_export, name):
    folder = hub_export / name
    configs = declared(folder)
    assert configs, f"{name} declares no configs"
    for config, split, features, rows in configs:
        ds = load_dataset(str(folder), config, split=split)
        assert ds.num_rows == rows > 0, (config, split)
        assert ds.features == features, (config, split)


def test_wikigenbench_declares_its_configs_with_nested_fields_and_fixed_vectors(hub_export):
    configs = {c: f for c, _, f, _ in declared(hub_export / "wikigenbench")}
    assert set(configs) == {"entries", "documents", "chunks", "embeddings_minilm", "rr_contexts"}
    vector = configs["embeddings_minilm"]["vector"]
    assert vector.length == 384 and vector.feature.dtype == "float16"
    sections = configs["entries"]["sections"].feature
    assert set(sections) == {"level", "title", "text"} and sections["level"].dtype == "int8"
    ds = load_dataset(str(hub_export / "wikigenbench"), "embeddings_minilm", split="test")
    assert len(ds[0]["vector"]) == 384


def _loaded(folder: Path, config: str) -> pa.Table:
    """A config as ``datasets`` loads it, without the dating columns (test_dating checks them)
    and token counts (test_tokens_column checks them)."""
    splits = [s for c, s, _, _ in declared(folder) if c == config]
    table = pa.concat_tables(
        load_dataset(str(folder), config, split=s).with_format("arrow")[:] for s in splits
    )
    assert set(DATING) <= set(table.column_names), config
    added = [*DATING, *(["tokens"] if "tokens" in table.column_names else [])]
    return table.drop_columns(added)


def _same_rows(exported: pa.Table, source: pa.Table, key: str) -> None:
    exported = exported.sort_by(key)
    source = source.select(exported.column_names).sort_by(key)
    assert exported.num_rows == source.num_rows
    for name in exported.column_names:
        assert exported.column(name).to_pylist() == source.column(name).to_pylist(), name


def test_round_trip_equals_the_stage_outputs(hub_export, publish_data):
    wiki = hub_export / "wikigenbench"
    _same_rows(
        _loaded(wiki, "entries").drop_columns(["outline_text", "article"]),  # for eval.yaml
        pq.read_table(publish_data / "wikigen/entries.parquet"),
        "event_id",
    )
    _same_rows(
        _loaded(wiki, "documents"), pq.read_table(publish_data / "web/documents.parquet"), "doc_id"
    )
    chunks = pq.read_table(publish_data / "chunk/chunks.parquet")
    web_chunks = chunks.filter(pc.equal(chunks.column("corpus"), "web"))
    exported_chunks = _loaded(wiki, "chunks")
    assert "corpus" not in exported_chunks.column_names
    _same_rows(exported_chunks, web_chunks, "chunk_id")
    vectors = pq.read_table(publish_data / "embed/vectors/embeddings.parquet")
    web_ids = set(web_chunks.column("chunk_id").to_pylist())
    vectors = vectors.filter(pc.is_in(vectors.column("chunk_id"), pa.array(sorted(web_ids))))
    exported_vectors = _loaded(wiki, "embeddings_minilm")
    assert set(exported_vectors.column("entry_id").to_pylist()) <= set(
        web_chunks.column("entry_id").to_pylist()
    )
    _same_rows(exported_vectors.drop_columns(["entry_id"]), vectors, "chunk_id")
    for record in sorted((publish_data / "lveval/records").glob("*.parquet")):
        source = pq.read_table(record)
        for variant in VARIANTS:
            exported = _loaded(hub_export / "lveval", f"{record.stem}_{variant}")
            exported = exported.drop_columns(["answer"]).rename_columns({"question": "input"})
            _same_rows(exported, source.filter(pc.equal(source["variant"], variant)), "qa_id")
    _same_rows(
        _loaded(hub_export / "summhay", "haystacks"),
        pq.read_table(publish_data / "summhay/haystacks.parquet"),
        "topic_id",
    )


def test_splits_follow_the_entries(hub_export, publish_data):
    entries = pq.read_table(publish_data / "wikigen/entries.parquet").to_pylist()
    split_of = {e["event_id"]: e["split"] for e in entries}
    for split in {"train", "test"}:
        docs = load_dataset(str(hub_export / "wikigenbench"), "documents", split=split)
        assert docs.num_rows and {split_of[e] for e in docs["event_id"]} == {split}


def test_card_metadata_is_present_and_well_typed(hub_export):
    for name, spec in DATASETS.items():
        card = DatasetCard.load(hub_export / name / "README.md")
        data = card.data.to_dict()
        assert data["license"] == spec.license and data["pretty_name"] == spec.pretty_name
        for key in ("language", "task_categories", "size_categories", "tags", "source_datasets"):
            assert isinstance(data[key], list) and data[key], key
            assert all(isinstance(v, str) for v in data[key]), key
        assert data["size_categories"][0] in {"n<1K", "1K<n<10K"}
        defaults = [c for c in data["configs"] if c.get("default")]
        assert len(defaults) == 1
        for config in data["configs"]:
            assert isinstance(config["config_name"], str) and config["data_files"]
        body = card.text
        for section in (
            "## What it measures",
            "## Loading",
            "## Configs and fields",
            "## Statistics",
            "## Provenance",
            "## Licensing",
            "## Limitations and bias",
            "## Citation",
            "```bibtex",
        ):
            assert section in body, (name, section)
        assert 'revision="2026.11.0"' in body and f'"benchsmith-test/{name}"' in body
        assert "CC BY-SA 4.0" in body
        for image in (hub_export / name / "images").glob("*.png"):
            assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert f"](images/{image.name})" in body
        assert (hub_export / name / "images" / "lengths.png").is_file()


def test_card_reports_crawl_outcomes_and_documents_per_entry(hub_export, publish_data):
    body = DatasetCard.load(hub_export / "wikigenbench" / "README.md").text
    statuses = pq.read_table(publish_data / "web/documents.parquet", columns=["status"])
    dead = statuses.filter(pc.equal(statuses.column("status"), "dead")).num_rows
    assert dead > 0
    crawl = body[body.index("### Crawl outcomes") :]
    dead_row = next(line for line in crawl.splitlines() if line.startswith("| dead |"))
    assert dead_row.rstrip(" |").endswith(f" {dead}")
    assert "### Usable documents per entry, by origin" in body
    archived = card_section(body, "Documents from web archives")
    assert "12 of the " in archived  # the snapshot's archive stand-in gives back 12 dead links
    assert "| wayback | 9 | 9 |" in archived and "| citation | 3 | 3 |" in archived
    assert "| `vector` | `float16[384]` |" in body
    assert "2026-01-01 to 2026-12-31" in body and "`wikigen.seed` = 2026" in body


def card_section(body: str, title: str) -> str:
    """The text under ``### title`` up to the next heading."""
    start = body.index(f"### {title}\n") + len(f"### {title}\n")
    end = body.find("\n#", start)
    return body[start : end if end >= 0 else len(body)]


def table_rows(section: str) -> list[tuple[tuple[str, ...], int]]:
    """``((key columns...), count)`` of each row of the Markdown table of a counts section."""
    lines = [line for line in section.splitlines() if line.startswith("|")]
    rows = []
    for line in lines[2:]:  # header and separator
        *key, n = (cell.strip() for cell in line.strip().strip("|").split("|"))
        rows.append((tuple(key), int(n)))
    return rows


DROP_TABLES = [
    ("wikigenbench", "Pages rejected by the wiki stage", "wiki/drops.parquet", ["reason"]),
    (
        "summhay",
        "Items dropped while building haystacks",
        "summhay/drops.parquet",
        ["step", "kind", "reason"],
    ),
    (
        "lveval",
        "QA items dropped while building records",
        "lveval/drops.parquet",
        ["step", "reason"],
    ),
]


@pytest.mark.parametrize(("name", "title", "source", "columns"), DROP_TABLES)
def test_card_counts_every_dropped_item(hub_export, publish_data, name, title, source, columns):
    rows = pq.read_table(publish_data / source, columns=columns).to_pylist()
    expected = Counter(tuple("" if r[c] is None else str(r[c]) for c in columns) for r in rows)
    if name == "wikigenbench":
        assert sum(expected.values()) > 0  # the snapshot's dump has pages outside the window
    body = DatasetCard.load(hub_export / name / "README.md").text
    section = card_section(body, title)
    shown = table_rows(section)
    assert dict(shown) == expected
    assert [key for key, _ in shown] == sorted(expected)
    if expected:
        assert f"| {' | '.join(columns)} | count |" in section
        assert f"{sum(expected.values())} in all (`data/{source}`)" in section
    else:
        assert f"None in this build (`data/{source}` is empty)" in section


def test_every_card_statistic_is_named_and_a_publish_dependency():
    deps = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["publish"]["deps"]
    for spec in DATASETS.values():
        for statistic in spec.statistics:
            assert statistic in NAMED, (spec.name, statistic)
            for source in NAMED[statistic].sources:
                assert f"data/{source}" in deps, (statistic, source)


def test_a_drops_file_without_its_reason_column_names_the_file_and_column(tmp_path):
    (tmp_path / "lveval").mkdir()
    table = pa.table({"dataset": ["d"], "item_id": ["q1"], "step": ["cfi"], "detail": [""]})
    pq.write_table(table, tmp_path / "lveval" / "drops.parquet")
    with pytest.raises(PublishError, match=r"lveval/drops\.parquet: no column 'reason'"):
        NAMED["lveval_drops"](tmp_path)


def test_a_missing_drops_file_gives_an_empty_table_with_a_note(tmp_path):
    table = NAMED["summhay_drops"](tmp_path)
    assert table.rows == []
    assert table.columns == ["step", "kind", "reason", "count"]
    assert "`data/summhay/drops.parquet` was not found" in table.note


def test_eval_yaml_lists_tasks_that_exist(hub_export):
    for name in DATASETS:
        registration = yaml.safe_load((hub_export / name / "eval.yaml").read_text())
        declared_splits = {(c, s) for c, s, _, _ in declared(hub_export / name)}
        assert registration["tasks"]
        for task in registration["tasks"]:
            assert (task["config"], task["split"]) in declared_splits
    lveval = yaml.safe_load((hub_export / "lveval" / "eval.yaml").read_text())
    assert [t["config"] for t in lveval["tasks"]] == [
        f"events_mixup_{level}_{variant}" for level in ("2k", "4k", "8k") for variant in VARIANTS
    ]
    summhay = yaml.safe_load((hub_export / "summhay" / "eval.yaml").read_text())
    assert [t["config"] for t in summhay["tasks"]] == ["subtopics"]


def test_manifest_hashes_the_data_not_the_card(hub_export):
    import json

    manifest = json.loads((hub_export / "lveval" / "benchsmith.json").read_text())
    assert manifest["version"] == "2026.11.0" and len(manifest["content_sha256"]) == 64
    assert set(manifest["files"]) == {
        str(p.relative_to(hub_export / "lveval"))
        for p in (hub_export / "lveval").rglob("*.parquet")
    }


def test_url_only_export_drops_document_text_everywhere(publish_data, hub_export, tmp_path):
    from pipelines.publish.dataset import export_dataset

    settings = publish_settings(
        tmp_path, documents="urls", embeddings=False, datasets=["wikigenbench", "summhay"]
    )
    out = tmp_path / "wikigenbench"
    export_dataset(
        DATASETS["wikigenbench"], settings, publish_data, out, ROOT, ROOT / "params.yaml"
    )
    documents = load_dataset(str(out), "documents", split="test")
    assert "text" not in documents.column_names and "snippet" not in documents.column_names
    assert {"url", "content_hash", "fetched_at"} <= set(documents.column_names)
    entries = load_dataset(str(out), "entries", split="test")
    assert "text" not in entries.features["documents"].feature
    assert "text" not in load_dataset(str(out), "chunks", split="test").column_names
    assert not (out / "embeddings_minilm").exists()
    assert "benchsmith rehydrate" in (out / "README.md").read_text()
    # the RR contexts lose their chunk texts, not their counts: the request once rehydrated
    contexts = load_dataset(str(out), "rr_contexts", split="test")
    assert "text" not in contexts.features["documents"].feature
    whole = load_dataset(str(hub_export / "wikigenbench"), "rr_contexts", split="test")
    assert contexts["tokens"] == whole["tokens"]


def test_shards_roll_at_the_size_cap(publish_data, tmp_path):
    spec = ConfigSpec("contexts", "lveval/records/*.parquet", "records")
    source = publish_data / "lveval/records/events_mixup_8k.parquet"
    exported = export_config(
        "contexts",
        spec,
        source,
        None,
        {},
        publish_data,
        tmp_path,
        url_only=False,
        shard_bytes=200_000,
    )
    files = exported.splits["test"].files
    assert len(files) > 1
    assert files == [
        f"contexts/test-{i:05d}-of-{len(files):05d}.parquet" for i in range(len(files))
    ]
    (tmp_path / "README.md").write_text(
        "---\nconfigs:\n- config_name: contexts\n  data_files:\n  - split: test\n"
        "    path: contexts/test-*\n---\n"
    )
    ds = load_dataset(str(tmp_path), "contexts", split="test")
    assert ds.num_rows == pq.read_metadata(source).num_rows == exported.rows


def test_drop_path_removes_a_field_inside_a_list_of_structs():
    table = pa.table({"docs": [[{"url": "u1", "text": "t1"}], None, []], "n": [1, 2, 3]})
    dropped = drop_path(table, "docs.text")
    assert dropped.column("docs").to_pylist() == [[{"url": "u1"}], None, []]
    with pytest.raises(PublishError, match="not a list of structs"):
        drop_path(table, "n.x")


def test_a_missing_source_names_the_file(tmp_path):
    from pipelines.errors import MissingInputError
    from pipelines.publish.dataset import export_dataset

    with pytest.raises(MissingInputError, match=r"lveval/records/\*\.parquet"):
        export_dataset(
            DATASETS["lveval"],
            publish_settings(tmp_path),
            tmp_path,
            tmp_path / "out",
            ROOT,
            ROOT / "params.yaml",
        )


@pytest.mark.parametrize(
    ("publish", "message"),
    [
        ({"version": "november"}, r"\[publish -> version\].*not a version"),
        ({"datasets": ["wikigenbench", "nope"]}, r"\[publish -> datasets\].*unknown dataset.*nope"),
        ({"repos": {"lveval": "no-slash"}}, r"repos.lveval.*'owner/name'"),
        ({"documents": "urls"}, r"\[publish -> documents\].*lveval cannot be published URL-only"),
    ],
)
def test_bad_publish_params_name_the_key(tmp_path, publish, message):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["publish"].update(publish)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    (tmp_path / "snapshot").symlink_to(ROOT / "snapshot")
    with pytest.raises(ParamsError, match=message):
        load_params(path)
