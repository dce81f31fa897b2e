"""``croissant.json``: its structure against the export, and the real ``mlcroissant`` reading it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pipelines.publish.croissant import CONFORMS_TO, CROISSANT
from pipelines.publish.manifest import read_manifest
from pipelines.publish.registry import DATASETS
from tests.support.venvs import venv_with

MLCROISSANT = ["mlcroissant[parquet]==1.1.1"]


def _croissant(folder: Path) -> dict[str, Any]:
    return json.loads((folder / CROISSANT).read_text("utf-8"))


def _configs(folder: Path) -> set[str]:
    return {path.split("/")[0] for path in read_manifest(folder).files}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_config_has_a_record_set_and_every_shard_its_sha256(hub_export: Path, name: str):
    folder = hub_export / name
    document = _croissant(folder)
    assert document["@type"] == "sc:Dataset"
    assert document["conformsTo"] == CONFORMS_TO
    assert document["name"] == name
    assert document["version"] == read_manifest(folder).version
    assert {r["@id"] for r in document["recordSet"]} == _configs(folder)
    objects = {
        d["contentUrl"]: d for d in document["distribution"] if d["@type"] == "cr:FileObject"
    }
    files = read_manifest(folder).files
    assert {path: o["sha256"] for path, o in objects.items()} == {
        path: f["sha256"] for path, f in files.items()
    }
    assert all((folder / path).is_file() for path in objects)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_fields_match_parquet_columns(hub_export: Path, name: str):
    folder = hub_export / name
    for record_set in _croissant(folder)["recordSet"]:
        config = record_set["@id"]
        for shard in sorted((folder / config).glob("*.parquet")):
            schema = pq.read_schema(shard)
            assert [f["name"] for f in record_set["field"]] == schema.names, shard
        for field in record_set["field"]:
            assert field["source"]["fileSet"]["@id"] == f"{config}-parquet"
            assert field["source"]["extract"]["column"] == field["name"]
            assert "dataType" in field or field["subField"], field["@id"]


def test_types_arrays_and_rai(hub_export: Path):
    document = _croissant(hub_export / "wikigenbench")
    fields = {f["@id"]: f for r in document["recordSet"] for f in r["field"]}
    assert fields["entries/word_count"]["dataType"] == "sc:Integer"
    assert fields["entries/created_at"]["dataType"] == "sc:DateTime"
    assert (
        fields["entries/outline"] | {"isArray": True, "dataType": "sc:Text"}
        == (fields["entries/outline"])
    )
    sections = fields["entries/sections"]
    assert sections["isArray"] and "dataType" not in sections
    assert {s["name"] for s in sections["subField"]} >= {"title", "text"}
    embeddings = [i for i in fields if i.endswith("/vector")]
    for vector in embeddings:
        assert fields[vector]["arrayShape"] == "384"
        assert fields[vector]["dataType"] == "sc:Float"
    for key in ("rai:dataCollection", "rai:personalSensitiveInformation", "rai:dataUseCases"):
        assert document[key]
    assert "Wikipedia" in document["rai:dataCollection"]
    assert document["url"] == "https://huggingface.co/datasets/benchsmith-test/wikigenbench"
    assert "@misc" in document["citeAs"] or "@article" in document["citeAs"]


READ_RECORDS = """
import itertools, json, sys
import mlcroissant as mlc
dataset = mlc.Dataset(jsonld=sys.argv[1])
rows = itertools.islice(dataset.records(record_set=sys.argv[2]), int(sys.argv[3]))
def plain(value):
    if hasattr(value, "isoformat"):  # a timestamp column (event_created_at)
        return value.isoformat()
    return value.decode() if isinstance(value, bytes) else value
print(json.dumps([{k.split("/")[-1]: plain(v) for k, v in row.items()} for row in rows]))
"""


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(DATASETS))
def test_mlcroissant_validates_and_reads(hub_export: Path, name: str):
    bin_ = venv_with("croissant", MLCROISSANT)
    path = hub_export / name / CROISSANT
    done = subprocess.run(
        [str(bin_ / "mlcroissant"), "validate", "--jsonld", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "error" not in done.stderr.lower(), done.stderr[-3000:]
    if name != "wikigenbench":
        return
    read = subprocess.run(
        [str(bin_ / "python"), "-c", READ_RECORDS, str(path), "chunks", "3"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert read.returncode == 0, read.stderr[-3000:]
    records = json.loads(read.stdout.strip().splitlines()[-1])
    first = sorted((hub_export / name / "chunks").glob("*.parquet"))[0]
    expected = pq.read_table(first).slice(0, 3).to_pylist()
    for row in expected:
        row["event_created_at"] = row["event_created_at"].isoformat()
    assert [
        {**r, "event_created_at": r["event_created_at"].replace(" ", "T")} for r in records
    ] == [{**r, "event_created_at": r["event_created_at"].replace(" ", "T")} for r in expected]
