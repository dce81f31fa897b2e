import re
import sys
from datetime import date, datetime
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


def test_a_missing_reviewed_rules_file_is_named_at_load_time(tmp_path):
    message = _error(tmp_path, lambda d: d["lveval"]["kpr"].update(rules_file="review/kpr.jsonl"))
    assert "[lveval -> kpr -> rules_file]" in message
    assert "file not found: review/kpr.jsonl" in message


def test_a_reviewed_rules_file_is_taken_from_the_params_directory(tmp_path):
    (tmp_path / "review").mkdir()
    (tmp_path / "review" / "kpr.jsonl").write_text('{"orig": "Imre", "repl": "Dalven"}\n')
    params = load_params(
        _write_params(tmp_path, lambda d: d["lveval"]["kpr"].update(rules_file="review/kpr.jsonl"))
    )
    assert params.lveval.kpr.rules_file == tmp_path / "review" / "kpr.jsonl"
    assert load_params(ROOT / "params.yaml").lveval.kpr.rules_file is None  # no reviewed rules


@pytest.mark.parametrize(
    ("value", "where", "says"),
    [
        ({"allow_addresses": ["localhost"]}, "allow_addresses", "'localhost' is not an IP"),
        ({"allow_addresses": ["10.0.0.0/33"]}, "allow_addresses", "'10.0.0.0/33'"),
        ({"resolve": {"*.x": "[::1]:8443"}}, "resolve", "'*.x': '[::1]:8443' is not an IP"),
        ({"resolve": {"*.x": "localhost:8443"}}, "resolve", "'localhost:8443' is not an IP"),
        ({"resolve": {"*.x": "127.0.0.1:http"}}, "resolve", "port must be a number"),
        ({"resolve": {"*.x": "127.0.0.1:70000"}}, "resolve", "port must be a number"),
    ],
)
def test_fetch_addresses_are_checked_at_load_time(tmp_path, value, where, says):
    message = _error(tmp_path, lambda d: d["web"]["fetch"].update(value))
    assert f"[web -> fetch -> {where}]" in message and says in message


def test_fetch_addresses_accept_what_the_address_guard_accepts(tmp_path):
    fetch = {
        "allow_addresses": ["127.0.0.1/32", "10.1.2.3/8", "::1", "fd00::/8", "192.168.0.7"],
        "resolve": {"*.example": "127.0.0.1:8443", "a.example": "::1", "b.example": "10.0.0.1"},
    }
    params = load_params(_write_params(tmp_path, lambda d: d["web"]["fetch"].update(fetch)))
    assert params.web.fetch.allow_addresses == fetch["allow_addresses"]
    assert params.web.fetch.resolve == fetch["resolve"]


@pytest.mark.parametrize(
    ("old", "says"),
    [
        ("sources", "the 'web' key"),
        ("baselines", "baselines.summhay -> summhay_baselines"),
    ],
)
def test_a_key_of_an_older_params_file_names_its_new_home(tmp_path, old, says):
    message = _error(tmp_path, lambda d: d.update({old: {"mode": "replay"}}))
    assert f"[{old}] this key was renamed" in message and says in message


@pytest.mark.parametrize(
    ("key", "edit", "extra"),
    [
        ("embed -> faiss", lambda d: d["embed"].update(faiss=True), "faiss"),
        ("embed -> executor", lambda d: d["embed"].update(executor="ray"), "ray"),
        ("chunk -> executor", lambda d: d["chunk"].update(executor="ray"), "ray"),
    ],
)
def test_check_names_the_key_and_extra_of_a_missing_optional_package(
    tmp_path, monkeypatch, key, edit, extra
):
    from typer.testing import CliRunner

    from pipelines.cli import app

    path = _write_params(tmp_path, edit)
    assert load_params(path)  # installed here: the setting is accepted
    monkeypatch.setitem(sys.modules, extra, None)  # as if the package were not installed
    result = CliRunner().invoke(app, ["check", "--params", str(path)])
    assert result.exit_code == 2
    assert f"[{key}] needs the '{extra}' package" in result.output
    assert f"pip install 'benchsmith[{extra}]'" in result.output


@pytest.mark.parametrize(
    ("key", "value", "written"),
    [
        ("created_after", date(2026, 1, 1), 'created_after: "2026-01-01"'),
        ("created_before", datetime(2026, 12, 31, 8, 30), 'created_before: "2026-12-31 08:30:00"'),
    ],
)
def test_an_unquoted_date_that_dvc_refuses_is_named_with_its_line_and_quoted_form(
    tmp_path, key, value, written
):
    message = _error(tmp_path, lambda d: d["wiki"].update({key: value}))
    assert re.search(rf"params\.yaml:\d+: \[wiki -> {key}\] .* is an unquoted date", message)
    assert "DVC refuses" in message and f"write {written}" in message


def test_other_yaml_types_dvc_refuses_are_named(tmp_path):
    def edit(d):
        d["wikigen"]["seed"] = b"2026"  # written as !!binary
        d["summhay"]["outlets"] = {"Valdra Herald"}  # written as !!set

    message = _error(tmp_path, edit)
    assert "[wikigen -> seed] a binary value, which DVC refuses; write a string, number" in message
    assert "[summhay -> outlets] a set value, which DVC refuses" in message


def test_dates_and_other_problems_are_reported_together_each_key_once(tmp_path):
    def edit(d):
        d["contamination"]["cutoff"] = date(2023, 10, 1)  # a string field: the model refuses it too
        d["wikigen"]["test_fracton"] = 0.2

    lines = _error(tmp_path, edit).splitlines()
    assert len(lines) == 2
    assert "[contamination -> cutoff] 2023-10-01 is an unquoted date" in lines[0]
    assert 'write cutoff: "2023-10-01"' in lines[0]
    assert "[wikigen -> test_fracton] unknown key; did you mean 'test_fraction'?" in lines[1]


def test_a_quoted_date_in_a_list_of_releases_is_accepted_and_an_unquoted_one_named(tmp_path):
    earlier = {"version": "2026.10.0", "until": "2026-10-31"}
    params = load_params(_write_params(tmp_path, lambda d: d["publish"].update(history=[earlier])))
    assert params.publish.history[0].version == "2026.10.0"
    unquoted = {**earlier, "until": date(2026, 10, 31)}
    message = _error(tmp_path, lambda d: d["publish"].update(history=[unquoted]))
    assert "[publish -> history -> 0 -> until] 2026-10-31 is an unquoted date" in message


@pytest.mark.parametrize(
    ("edit", "where", "nearest"),
    [
        (
            lambda d: d["wikigen"].update(test_fracton=0.2),
            "wikigen -> test_fracton",
            "test_fraction",
        ),
        (lambda d: d["lveval"]["kpr"].update(max_rule=2), "lveval -> kpr -> max_rule", "max_rules"),
        (
            lambda d: d["summhay"]["topics"][0].update(participant=[]),
            "summhay -> topics -> 0 -> participant",
            "participants",
        ),
        (lambda d: d.update(wikigenn={}), "wikigenn", "wikigen"),
    ],
)
def test_a_misspelt_key_is_offered_the_nearest_known_key(tmp_path, edit, where, nearest):
    message = _error(tmp_path, edit)
    assert f"[{where}] unknown key; did you mean {nearest!r}?" in message


def test_a_key_like_no_other_gets_no_suggestion(tmp_path):
    message = _error(tmp_path, lambda d: d["wikigen"].update(colour="blue"))
    assert "[wikigen -> colour] unknown key (check the spelling" in message
    assert "did you mean" not in message


SECRET = "sk-test-0123456789abcdefghij"


@pytest.mark.parametrize(
    ("edit", "where", "variable"),
    [
        (lambda d: d["llm"].update(api_key=SECRET), "llm -> api_key", "OPENAI_API_KEY"),
        (
            lambda d: d["llm"].update(api_key=SECRET, api_key_env="VLLM_KEY"),
            "llm -> api_key",
            "VLLM_KEY",
        ),
        (lambda d: d["summhay"].update(openai_api_key=SECRET), "summhay -> openai_api_key",
         "OPENAI_API_KEY"),
        (lambda d: d["publish"].update(hf_token=SECRET), "publish -> hf_token", "HF_TOKEN"),
        (lambda d: d["publish"].update(token=SECRET), "publish -> token", "HF_TOKEN"),
        (lambda d: d["web"]["search"].update(api_key=SECRET), "web -> search -> api_key",
         "GOOGLE_API_KEY"),
        (lambda d: d["web"]["search"].update(cse_id=SECRET), "web -> search -> cse_id",
         "GOOGLE_CSE_ID"),
        (lambda d: d["web"]["search"].setdefault("brave", {}).update(api_key=SECRET),
         "web -> search -> brave -> api_key", "BRAVE_API_KEY"),
        (lambda d: d["web"]["search"].setdefault("serpapi", {}).update(token=SECRET),
         "web -> search -> serpapi -> token", "SERPAPI_KEY"),
        (lambda d: d["web"]["search"].update(serpapi_api_key=SECRET),
         "web -> search -> serpapi_api_key", "SERPAPI_KEY"),
        (lambda d: d.update(hf_token=SECRET), "hf_token", "HF_TOKEN"),
    ],
)  # fmt: skip
def test_a_key_written_in_params_names_the_environment_variable_to_set(
    tmp_path, edit, where, variable
):
    message = _error(tmp_path, edit)
    assert f"[{where}] keys are never read from params.yaml: set the {variable} " in message
    assert SECRET not in message and "did you mean" not in message


def test_the_llm_key_message_says_which_setting_names_the_variable(tmp_path):
    message = _error(tmp_path, lambda d: d["llm"].update(api_key=SECRET))
    assert "OPENAI_API_KEY environment variable (named by llm.api_key_env)" in message


def test_a_key_written_as_api_key_env_is_refused_without_being_echoed(tmp_path):
    message = _error(tmp_path, lambda d: d["llm"].update(api_key_env=SECRET))
    assert "[llm -> api_key_env] this names the environment variable" in message
    assert SECRET not in message
