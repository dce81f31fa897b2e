"""The lveval stage in tokens (``length_unit: tokens``) on the snapshot: records sized in the
tokenizer's count of the harness request, read by the baselines; a level no item can fill is a
drop with its reason; a bad tokenizer fails at ``benchsmith check``, naming key and path; a
tokenizer.json is a DVC dependency of the stage."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from benchsmith_scoring.harness import lveval_prompt
from benchsmith_scoring.tokens import load
from builders.lveval.records import TOKEN_RECORD_SCHEMA, VARIANTS
from pipelines.cli import app
from pipelines.dag.dvc_yaml import tokenizer_deps
from pipelines.dag.table import STAGES
from pipelines.settings import Params
from pipelines.stages.lveval import run_lveval
from pipelines.stages.lveval_baselines import run_lveval_baselines
from tests.support.smollm import ensure_tokenizer
from tests.support.snapshot import ROOT


def build(params: Params, entries: Path, out: Path, **lveval: object) -> None:
    llm = params.llm.model_copy(update={"cache": out.parent / "llm.sqlite"})
    update = {"length_unit": "tokens", "levels": ["2k"], **lveval}
    run_lveval(params.lveval.model_copy(update=update), entries=entries, out=out, llm=llm)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, params: Params, snapshot_entries: Path):
    out = tmp_path_factory.mktemp("lveval-tokens") / "lveval"
    build(params, snapshot_entries, out)
    return out


def test_every_record_fits_its_level_in_tokens_and_says_so(built: Path, params: Params) -> None:
    table = pq.read_table(built / "records" / "events_mixup_2k.parquet")
    assert table.schema.equals(TOKEN_RECORD_SCHEMA, check_metadata=False)
    rows = table.to_pylist()
    qa = pq.read_table(built / "qa.parquet").num_rows
    assert len(rows) == 4 * qa and qa >= 10
    assert {r["variant"] for r in rows} == set(VARIANTS)
    tok = load("cl100k_base")
    floor = 2048 * (1 - params.lveval.tolerance)
    for row in rows:
        prompt = lveval_prompt({"context": row["context"], "question": row["input"]})
        assert floor <= tok.count_request(prompt, row["answers"][0]) == row["request_tokens"]
        assert row["request_tokens"] <= row["level_tokens"] == 2048
        assert (row["level_words"], row["tokenizer"]) == (2000, "cl100k_base")
    level = json.loads((built / "stats.json").read_text())["levels"]["2k"]
    assert level["tokens"] == 2048 and level["framing"] == "openai-chat"
    assert level["max_request_tokens"] == max(r["request_tokens"] for r in rows)


def test_the_baselines_read_records_built_in_tokens(
    built: Path, params: Params, tmp_path: Path
) -> None:
    settings = params.lveval_baselines.model_copy(update={"retrievers": ["random", "bm25"]})
    out = tmp_path / "baselines"
    stats = run_lveval_baselines(
        settings,
        records=built / "records",
        out=out,
        llm=params.llm.model_copy(update={"cache": tmp_path / "llm.sqlite"}),
        retrieval=params.resolved_retrieval(),
    )
    assert stats.counts["records"] == stats.counts["answers_ok"] > 0
    with (out / "ak_by_level.csv").open() as f:
        plotted = list(csv.DictReader(f))
    assert [row["level_words"] for row in plotted] == ["2000"]


def test_a_level_no_item_can_fill_is_a_drop_with_its_reason_and_the_stage_goes_on(
    params: Params, snapshot_entries: Path, tmp_path: Path
) -> None:
    out = tmp_path / "lveval"
    build(params, snapshot_entries, out, tolerance=0.001)  # narrower than a fact
    drops = [d for d in pq.read_table(out / "drops.parquet").to_pylist() if d["step"] == "assembly"]
    qa = pq.read_table(out / "qa.parquet").num_rows
    assert len(drops) == qa > 0 and {d["reason"] for d in drops} == {"level_unfilled"}
    assert all(d["detail"].startswith("2k: no cut puts every variant's") for d in drops)
    assert pq.read_table(out / "records" / "events_mixup_2k.parquet").num_rows == 0
    stats = json.loads((out / "stats.json").read_text())
    assert stats["dropped"]["assembly_level_unfilled"] == qa


@pytest.mark.parametrize(
    ("spec", "file", "said"),
    [
        ("cl100k", None, "tokenizer 'cl100k': not an OpenAI encoding"),
        ("tok/tokenizer.json", "{broken", "tok/tokenizer.json is not a readable tokenizer.json"),
        ("gone/tokenizer.json", None, "no tokenizer file at {root}/gone/tokenizer.json"),
    ],
)
def test_check_names_the_key_and_path_of_a_bad_tokenizer(
    tmp_path: Path, spec: str, file: str | None, said: str
) -> None:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["lveval"]["tokenizer"] = spec
    if file is not None:
        (tmp_path / spec).parent.mkdir()
        (tmp_path / spec).write_text(file)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["check", "--params", str(tmp_path / "params.yaml")])
    assert result.exit_code == 2
    assert "[lveval -> tokenizer]" in result.output
    assert said.format(root=tmp_path) in result.output.replace("\n", "")


def test_a_tokenizer_json_and_its_chat_template_are_dependencies_of_the_stage(
    tmp_path: Path,
) -> None:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
    assert tokenizer_deps(STAGES["lveval"], tmp_path) == []  # cl100k_base: no file
    source = ensure_tokenizer(ROOT / ".cache").parent
    folder = tmp_path / "models" / "smol"
    folder.mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).write_bytes((source / name).read_bytes())
    data["lveval"]["tokenizer"] = "smol=models/smol/tokenizer.json"
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
    assert tokenizer_deps(STAGES["lveval"], tmp_path) == [
        "models/smol/tokenizer.json",
        "models/smol/tokenizer_config.json",
    ]
    result = CliRunner().invoke(app, ["check", "--params", str(tmp_path / "params.yaml")])
    assert "lveval" not in result.output  # a readable tokenizer.json passes the check


def test_items_whose_pool_cannot_fill_the_largest_level_in_tokens_are_dropped_first(
    params: Params, snapshot_entries: Path, tmp_path: Path
) -> None:
    out = tmp_path / "lveval"
    build(params, snapshot_entries, out, levels=["2k", "128k"])  # the snapshot has ~65k words
    drops = pq.read_table(out / "drops.parquet").to_pylist()
    small = [d for d in drops if d["reason"] == "corpus_too_small"]
    assert small and pq.read_table(out / "qa.parquet").num_rows == 0
    assert small[0]["detail"] == "the corpus cannot fill 131072 cl100k_base tokens around this item"
