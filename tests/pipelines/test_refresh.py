"""`benchsmith refresh` without building: the settings it writes, what it keeps, what it refuses.
(The build itself, old items byte-identical, is tests/integration/test_dvc_pipeline.py.)"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.refresh import RefreshError, next_version, refresh
from pipelines.settings import load_params
from tests.support.snapshot import ROOT

DATASETS = ("wikigenbench", "summhay", "lveval")


@pytest.mark.parametrize(
    ("current", "today", "expected"),
    [
        ("2026.11.0", date(2026, 12, 2), "2026.12.0"),
        ("2026.11.0", date(2026, 11, 30), "2026.11.1"),
        ("2026.11.3rc1", date(2026, 11, 30), "2026.11.4"),
        ("1.2.0", date(2027, 1, 5), "2027.1.0"),
    ],
)
def test_the_next_calendar_version(current, today, expected):
    assert next_version(current, today) == expected


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """params.yaml and a built release 2026.11.0 (its records and changelogs only)."""
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    for folder in ("snapshot", "cards"):  # the files params.yaml names must exist
        (tmp_path / folder).symlink_to(ROOT / folder)
    for name in DATASETS:
        folder = tmp_path / "data" / "publish" / name
        folder.mkdir(parents=True)
        (folder / "release.json").write_text(json.dumps({"dataset": name, "version": "2026.11.0"}))
        (folder / "CHANGELOG.md").write_text(f"# Changelog\n\n## 2026.11.0 of {name}\n")
    return tmp_path


def test_refresh_moves_the_window_keeps_the_release_and_keeps_comments(project):
    params_file = project / "params.yaml"
    before = params_file.read_text()
    plan = refresh(params_file, date(2027, 2, 28), today=date(2027, 3, 1))
    assert (plan.previous, plan.version) == ("2026.11.0", "2027.3.0")
    after = load_params(params_file)
    assert after.wiki.created_before == date(2027, 2, 28)
    assert after.wiki.created_after == date(2026, 1, 1)  # earlier items stay in the window
    assert after.publish.version == "2027.3.0"
    assert [(h.version, h.until) for h in after.publish.history] == [
        ("2026.11.0", date(2026, 12, 31))
    ]
    assert [r.version for r in after.releases()] == ["2026.11.0", "2027.3.0"]
    text = params_file.read_text()
    comments = [line.strip() for line in before.splitlines() if line.strip().startswith("#")]
    assert all(c in text for c in comments)  # every comment kept
    for name in DATASETS:
        kept = project / "releases" / "2026.11.0"
        assert json.loads((kept / f"{name}.json").read_text())["dataset"] == name
        assert name in (kept / f"{name}.CHANGELOG.md").read_text()
    # once 2027.3.0 is built, a second refresh appends it to the history
    for name in DATASETS:
        record = project / "data" / "publish" / name / "release.json"
        record.write_text(json.dumps({"version": "2027.3.0"}))
    refresh(params_file, date(2027, 5, 31), version="2027.6.0", items="new")
    again = load_params(params_file)
    assert [h.version for h in again.publish.history] == ["2026.11.0", "2027.3.0"]
    assert again.publish.items == "new"


@pytest.mark.parametrize(
    ("until", "version", "message"),
    [
        (date(2026, 12, 31), None, "does not move the window"),
        (date(2027, 1, 31), "2026.11.0", "already taken"),
    ],
)
def test_refresh_refuses_and_changes_nothing(project, until, version, message):
    before = (project / "params.yaml").read_text()
    with pytest.raises(RefreshError, match=message):
        refresh(project / "params.yaml", until, version=version)
    assert (project / "params.yaml").read_text() == before
    assert not (project / "releases").exists()


def test_refresh_refuses_an_unbuilt_or_stale_release_and_names_the_file(project):
    record = project / "data" / "publish" / "summhay" / "release.json"
    record.write_text(json.dumps({"version": "2026.10.0"}))
    before = (project / "params.yaml").read_text()
    with pytest.raises(RefreshError, match=r"summhay/release.json is release 2026\.10\.0"):
        refresh(project / "params.yaml", date(2027, 1, 31))
    record.unlink()
    with pytest.raises(RefreshError, match=r"summhay/release.json is missing.*dvc repro"):
        refresh(project / "params.yaml", date(2027, 1, 31))
    assert (project / "params.yaml").read_text() == before


def test_the_cli_refreshes_without_building_and_reports_bad_days(project):
    runner = CliRunner()
    params = str(project / "params.yaml")
    bad = runner.invoke(app, ["refresh", "--until", "31/01/2027", "--params", params])
    assert bad.exit_code != 0 and "not a day" in bad.output
    done = runner.invoke(
        app, ["refresh", "--until", "2027-01-31", "--version", "2027.1.0", "--no-repro",
              "--params", params],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "2026.11.0 (to 2026-12-31) -> 2027.1.0 (to 2027-01-31)" in done.output
    assert load_params(params).publish.version == "2027.1.0"


def test_refresh_without_dvc_on_path_says_so_before_changing_anything(project, monkeypatch):
    (project / "bin").mkdir()
    monkeypatch.setenv("PATH", str(project / "bin"))
    before = (project / "params.yaml").read_text()
    args = ["refresh", "--until", "2027-01-31", "--params", str(project / "params.yaml")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "error: 'benchsmith refresh' (unless --no-repro) needs the 'dvc' program, which is not "
        "on PATH; activate benchsmith's environment, or pip install dvc"
    ]
    assert (project / "params.yaml").read_text() == before
    assert not (project / "releases").exists()
