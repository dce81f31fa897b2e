from pathlib import Path

import pytest
import yaml

from pipelines.errors import ParamsError
from pipelines.settings import load_params
from tests.support.snapshot import ROOT


def _write_params(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["wiki"]["dump"]["path"] = str(ROOT / data["wiki"]["dump"]["path"])
    edit(data)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _error(tmp_path: Path, edit) -> str:
    with pytest.raises(ParamsError) as info:
        load_params(_write_params(tmp_path, edit))
    return str(info.value)


def test_project_params_are_valid():
    params = load_params(ROOT / "params.yaml")
    assert params.wiki.min_words == 1000
    assert params.wiki.dump.path.is_file()


def test_unknown_key_is_named_with_its_path_and_file(tmp_path):
    message = _error(tmp_path, lambda d: d["wiki"].update(min_wrds=5))
    assert "params.yaml" in message
    assert "[wiki -> min_wrds]" in message
    assert "unknown key" in message


def test_unknown_stage_key_is_refused(tmp_path):
    message = _error(tmp_path, lambda d: d.update(wikki={}))
    assert "[wikki]" in message


def test_wrong_type_names_key_and_shows_value(tmp_path):
    message = _error(tmp_path, lambda d: d["wiki"].update(min_words="many"))
    assert "[wiki -> min_words]" in message
    assert "'many'" in message


def test_missing_file_is_named(tmp_path):
    message = _error(tmp_path, lambda d: d["wiki"]["dump"].update(path="nowhere/export.xml"))
    assert "[wiki -> dump -> path]" in message
    assert "nowhere/export.xml" in message


def test_bad_regular_expression_is_named(tmp_path):
    message = _error(tmp_path, lambda d: d["wiki"].update(event_category_patterns=["(unclosed"]))
    assert "[wiki -> event_category_patterns]" in message
    assert "(unclosed" in message


def test_reversed_window_is_refused(tmp_path):
    message = _error(tmp_path, lambda d: d["wiki"].update(created_after="2027-01-01"))
    assert "created_after must not be later than created_before" in message


def test_api_reader_needs_a_contact_for_its_user_agent(tmp_path):
    message = _error(tmp_path, lambda d: d["wiki"].update(reader="api"))
    assert "api.contact" in message


def test_missing_params_file_and_bad_yaml(tmp_path):
    with pytest.raises(ParamsError, match="file not found"):
        load_params(tmp_path / "params.yaml")
    bad = tmp_path / "params.yaml"
    bad.write_text("wiki: [unclosed\n")
    with pytest.raises(ParamsError, match="not valid YAML"):
        load_params(bad)


@pytest.mark.parametrize(
    ("edit", "where", "says"),
    [
        (lambda d: d["wiki"].update(min_words=True), "[wiki -> min_words]", "integer"),
        (
            lambda d: d["wiki"]["dump"].update(path=str(ROOT / "snapshot")),
            "[wiki -> dump -> path]",
            "not a file",
        ),
        (lambda d: d["wiki"]["api"].update(contact="x"), "[wiki -> api -> contact]", "pattern"),
        (
            lambda d: d["wiki"]["dump"].update(snapshot_at="2026-11-20T00:00:00"),
            "[wiki -> dump -> snapshot_at]",
            "timezone",
        ),
        (
            lambda d: d["wiki"]["api"].update(new_pages=True),
            "[wiki -> api -> new_pages]",
            "logevents",
        ),
    ],
)
def test_suspicious_values_are_refused(tmp_path, edit, where, says):
    message = _error(tmp_path, edit)
    assert where in message and says in message
