import errno
import io
import re
import shutil

import pyarrow.parquet as pq
import yaml
from typer.testing import CliRunner

from pipelines.cli import app
from tests.support.read_only import benchsmith, run_read_only
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
    assert "[llm -> backend] Input should be 'template', 'openai' or 'anthropic'" in result.output
    assert "[summhay] subtopics_per_document cannot exceed subtopics" in result.output


def test_a_read_only_out_folder_is_one_line_naming_it_without_a_traceback(tmp_path):
    out = tmp_path / "read-only" / "wiki"
    command = benchsmith("stage", "wiki", "-p", str(ROOT / "params.yaml"), "--out", str(out))
    result = run_read_only(out.parent, command)
    assert result.returncode == 1, result.stderr
    [line] = result.stderr.strip().splitlines()
    # what failed is the output or the run's scratch folder beside it
    assert line.startswith((f"error: {out}: ", f"error: {out.parent}/.{out.name}.tmp-"))
    assert "read-only file system" in line or "permission denied" in line
    assert line.endswith(", or pass another --out")


def _earlier_outputs(out):
    out.mkdir(parents=True)
    (out / "articles.parquet").write_bytes(b"earlier articles")
    (out / "stats.json").write_text('{"earlier": true}\n')
    return {p.name: p.read_bytes() for p in out.iterdir()}


def test_a_full_disk_names_the_out_folder_and_keeps_the_earlier_outputs(tmp_path, monkeypatch):
    def disk_full(self, table, row_group_size=None):  # as pyarrow reports it: no file named
        raise OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", disk_full)
    out = tmp_path / "wiki"
    earlier = _earlier_outputs(out)
    args = ["stage", "wiki", "-p", str(ROOT / "params.yaml"), "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: {out}: no space left on device while writing under it; free some space, or "
        "pass another --out"
    ]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == earlier  # no scratch left either


def test_too_many_open_files_names_the_file_and_what_to_lower(tmp_path, monkeypatch):
    dump = ROOT / "snapshot" / "wiki" / "export.xml"
    real_open = io.open

    def crowded(file, *args, **kwargs):  # the kernel's EMFILE, when the stage opens the dump
        if str(file) == str(dump):
            raise OSError(errno.EMFILE, "Too many open files", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", crowded)
    args = ["stage", "wiki", "-p", str(ROOT / "params.yaml"), "--out", str(tmp_path / "wiki")]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: {dump}: too many open files; raise the limit (ulimit -n) or lower workers or "
        "concurrency in params.yaml"
    ]


def test_messages_and_verbose_tracebacks_are_redacted(tmp_path, monkeypatch):
    key = "sk-live-0123456789abcdefghijklmn"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    where = tmp_path / key / "params.yaml"  # an error message that would carry the key
    result = runner.invoke(app, ["check", "-p", str(where)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {tmp_path}/REDACTED/params.yaml: file not found; run from the project root"
    ]
    verbose = runner.invoke(app, ["-v", "check", "-p", str(where)])
    assert verbose.exit_code == 2
    assert "Traceback (most recent call last)" in verbose.output and "load_params" in verbose.output
    assert key not in verbose.output and verbose.output.count("REDACTED/params.yaml") == 2


def test_check_refuses_an_unquoted_date_that_dvc_would_reject(tmp_path):
    text = (ROOT / "params.yaml").read_text()
    assert 'created_after: "2026-01-01"' in text
    bad = tmp_path / "params.yaml"
    bad.write_text(text.replace('created_after: "2026-01-01"', "created_after: 2026-01-01"))
    result = runner.invoke(app, ["check", "--params", str(bad)])
    assert result.exit_code == 2
    assert re.search(
        r"params\.yaml:\d+: \[wiki -> created_after\] 2026-01-01 is an unquoted", result.output
    )
    assert 'write created_after: "2026-01-01"' in result.output


def test_check_names_the_java_install_when_meteor_is_asked_for_without_it(tmp_path, monkeypatch):
    params = ROOT / "params.yaml"
    assert runner.invoke(app, ["check", "-p", str(params)]).exit_code == 0
    monkeypatch.setenv("PATH", str(tmp_path))  # no java on it
    result = runner.invoke(app, ["check", "-p", str(params)])
    assert result.exit_code == 1
    assert "apt-get install -y --no-install-recommends default-jre-headless" in result.output
    off = params.read_text().replace(
        "wikigen_baselines:\n", "wikigen_baselines:\n  meteor: false\n"
    )
    (tmp_path / "params.yaml").write_text(off)
    (tmp_path / "snapshot").symlink_to(ROOT / "snapshot")  # its relative paths
    assert runner.invoke(app, ["check", "-p", str(tmp_path / "params.yaml")]).exit_code == 0
