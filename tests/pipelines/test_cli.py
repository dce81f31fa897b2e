import shutil

import yaml
from typer.testing import CliRunner

from pipelines.cli import app
from tests.support.snapshot import ROOT, SNAPSHOT_EVENTS

runner = CliRunner()


def test_help_lists_commands_and_stages():
    top = runner.invoke(app, ["--help"])
    assert top.exit_code == 0
    assert "stage" in top.output and "report" in top.output and "check" in top.output
    stage = runner.invoke(app, ["stage", "--help"])
    assert stage.exit_code == 0
    assert "wiki" in stage.output and "web" in stage.output and "wikigen" in stage.output
    assert "summhay" in stage.output
    assert "snapshot" in top.output
    wiki = runner.invoke(app, ["stage", "wiki", "--help"])
    assert "drops.parquet" in wiki.output


def test_check_reports_a_bad_key_with_exit_code_2(tmp_path):
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["wiki"]["max_wrods"] = 10
    bad = tmp_path / "params.yaml"
    bad.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["check", "--params", str(bad)])
    assert result.exit_code == 2
    assert "wiki -> max_wrods" in result.output


def test_stage_wiki_runs_and_prints_a_summary(tmp_path, monkeypatch):
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "snapshot", tmp_path / "snapshot")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["stage", "wiki"])
    assert result.exit_code == 0, result.output
    assert (
        f"{len(SNAPSHOT_EVENTS)} events selected" in result.output and "too_long 1" in result.output
    )
    assert (tmp_path / "data" / "wiki" / "articles.parquet").is_file()
    report = runner.invoke(app, ["report"])
    assert report.exit_code == 0 and "stage wiki" in report.output
    assert "rejected: too_long" in report.output
    assert "outputs in data/wiki/" in report.output


def test_report_without_outputs_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["report"])
    assert result.exit_code == 1
    assert "dvc repro" in result.output


def test_check_names_a_bad_llm_and_summhay_setting(tmp_path):
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["llm"]["backend"] = "gpt"
    data["summhay"]["subtopics_per_document"] = 99
    bad = tmp_path / "params.yaml"
    bad.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["check", "--params", str(bad)])
    assert result.exit_code == 2
    assert "[llm -> backend] Input should be 'template' or 'openai'" in result.output
    assert "[summhay] subtopics_per_document cannot exceed subtopics" in result.output
