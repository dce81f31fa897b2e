"""The stage table: dvc.yaml, the CLI, the params model and the run functions all follow it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.dag.closure import closure
from pipelines.dag.dvc_yaml import dvc_yaml
from pipelines.dag.table import SECTIONS, SHARED, STAGES, stage_of
from pipelines.settings import Params
from tests.support.snapshot import ROOT

GENERATED = yaml.safe_load(dvc_yaml(ROOT))["stages"]


def test_the_committed_dvc_yaml_is_the_generated_one() -> None:
    assert (ROOT / "dvc.yaml").read_text("utf-8") == dvc_yaml(ROOT), (
        "dvc.yaml is stale: run 'benchsmith dag --write'"
    )


@pytest.mark.parametrize("stage", ["summhay_baselines", "lveval_baselines", "wikigen_baselines"])
def test_the_baselines_stages_depend_on_the_encoder_they_run(stage: str) -> None:
    deps = GENERATED[stage]["deps"]
    for module in ("encoder.py", "models.py", "registry.py", "batching.py"):
        assert f"pipelines/embed/{module}" in deps
    assert "pipelines/retrieval/dense.py" in deps


def test_code_deps_are_the_import_closure_and_nothing_else() -> None:
    wiki = [d for d in GENERATED["wiki"]["deps"] if d.endswith(".py")]
    # the wiki stage reads dumps and the MediaWiki API; it runs no model and no crawler
    assert "pipelines/sources/wiki/dump.py" in wiki and "pipelines/sources/wiki/wikitext.py" in wiki
    assert not [d for d in wiki if d.startswith(("pipelines/embed/", "pipelines/llm/"))]
    assert "pipelines/sources/web/fetch.py" not in wiki
    # no stage depends on the CLI, the table, or another stage's module
    for name, entry in GENERATED.items():
        deps = entry["deps"]
        assert "pipelines/cli.py" not in deps and "pipelines/dag/table.py" not in deps
        stages = {d for d in deps if d.startswith("pipelines/stages/") and "__init__" not in d}
        assert stages == {f"pipelines/stages/{name}.py"}, name


def test_a_lazy_import_inside_a_function_is_part_of_the_closure() -> None:
    # the chunk stage imports the Ray executor only when executor is ray; it still counts
    files = {p.as_posix() for p in closure("pipelines.stages.chunk", ROOT)}
    assert "pipelines/embed/ray_executor.py" in files
    assert "pipelines/embed/__init__.py" in files and "pipelines/__init__.py" in files


def test_metrics_and_plots_are_never_uncached_outs() -> None:
    for name, entry in GENERATED.items():
        for out in entry["outs"]:
            assert isinstance(out, str), f"{name}: {out} is an out with options"
        for metric in entry["metrics"]:
            assert list(metric.values()) == [{"cache": False}]
    plots = GENERATED["lveval_baselines"]["plots"]
    assert [next(iter(p)) for p in plots] == [
        "data/lveval_baselines/ak_by_level.csv",
        "data/lveval_baselines/recall_by_level.csv",
    ]


def test_every_input_is_an_output_of_an_earlier_stage() -> None:
    seen: dict[str, list[str]] = {}
    for stage in STAGES.values():
        for item in stage.inputs:
            assert item.stage in seen, f"{stage.name} reads {item.stage} before it runs"
            assert item.path in seen[item.stage], f"{item.stage} does not write {item.path}"
        seen[stage.name] = stage.writes()


def test_publish_reads_what_the_registry_names() -> None:
    deps = GENERATED["publish"]["deps"]
    for path in (
        "data/wikigen/entries.parquet",
        "data/embed/vectors",
        "data/lveval/records",
        "data/summhay_baselines/summhay.json",
        "data/lveval_baselines/ak_by_level.csv",
        "data/wiki/drops.parquet",
        "cards",
    ):
        assert path in deps
    assert set(GENERATED["publish"]["params"]) >= {"wiki", "web", "lveval_baselines", "retrieval"}


def test_run_functions_take_what_the_table_gives() -> None:
    for stage in STAGES.values():
        signature = inspect.signature(stage.function())
        named = [p for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY]
        expected = {"out", *(i.name for i in stage.inputs if i.name), *stage.uses}
        assert {p.name for p in named} == expected, stage.name
        assert callable(stage.summary())


def test_params_has_a_key_per_stage_and_shared_section() -> None:
    assert set(Params.model_fields) == set(STAGES) | set(SECTIONS)
    for stage in STAGES.values():
        assert Params.model_fields[stage.name].annotation is stage.settings
    assert set(SHARED) >= {u for s in STAGES.values() for u in s.uses}


def test_params_declares_the_table_key_by_key() -> None:
    """Params is written out by hand: same keys in the table's order, the same model per key,
    and a key required exactly when its model has a required field (a stage added to the table
    without a Params field fails here)."""
    models = {**{s.name: s.settings for s in STAGES.values()}, **SECTIONS}
    assert list(Params.model_fields) == list(models)
    for key, model in models.items():
        field = Params.model_fields[key]
        assert field.annotation is model, key
        required = any(f.is_required() for f in model.model_fields.values())
        assert field.is_required() is required, key
        if not required:
            assert field.default_factory is model, key


def test_stage_of_finds_the_producer_of_a_path() -> None:
    assert stage_of(Path("data/lveval/records/events_mixup_2k.parquet")) == "lveval"
    assert stage_of(Path("/tmp/x/data/summhay_baselines/summhay.json")) == "summhay_baselines"
    assert stage_of(Path("somewhere/else.parquet")) is None


def test_every_stage_command_documents_itself() -> None:
    runner = CliRunner()
    for stage in STAGES.values():
        result = runner.invoke(app, ["stage", stage.name, "--help"])
        assert result.exit_code == 0, result.output
        assert "--params" in result.output and "--out" in result.output
        for item in stage.inputs:
            if item.name:
                assert f"--{item.name}" in result.output


def test_a_missing_input_names_its_stage_from_the_table(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    (tmp_path / "snapshot").symlink_to(ROOT / "snapshot")
    runner = CliRunner()
    result = runner.invoke(app, ["stage", "wikigen"])
    assert result.exit_code == 1
    assert "missing data/wiki/articles.parquet (selected events)" in result.output
    assert "the wiki stage writes it: run 'dvc repro wiki' first" in result.output
    assert not (tmp_path / "data" / "wikigen").exists()


def test_dag_check_tells_when_dvc_yaml_is_stale(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["dag", "--check", "--root", str(ROOT)]).exit_code == 0
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    for part in ("builders", "pipelines", "benchsmith_scoring"):
        (tmp_path / part).symlink_to(ROOT / part)
    stale = runner.invoke(app, ["dag", "--check", "--root", str(tmp_path)])
    assert stale.exit_code == 1 and "benchsmith dag --write" in stale.output
    assert runner.invoke(app, ["dag", "--write", "--root", str(tmp_path)]).exit_code == 0
    assert (tmp_path / "dvc.yaml").read_text() == dvc_yaml(ROOT)


def test_an_error_deep_in_a_command_gets_the_hint_of_the_stage_that_writes_the_path(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "data" / "publish"
    result = CliRunner().invoke(
        app,
        ["publish", "--params", str(ROOT / "params.yaml"), "--folder", str(folder), "--dry-run"],
    )
    assert result.exit_code == 1
    assert "wikigenbench/benchsmith.json: not an export folder" in result.output
    assert "the publish stage writes it: run 'dvc repro publish' first" in result.output
