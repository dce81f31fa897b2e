"""The one redaction layer: what it recognises (environment values, registered key variables,
credential shapes), what it leaves alone, and its choke points (errors, tables, JSON, logs)."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders.drops import DROP_SCHEMA, Drop
from pipelines.errors import LLMError, MissingInputError
from pipelines.outputs import TableWriter, write_json, write_json_atomic
from pipelines.secrets import (
    REDACTED,
    RedactingFilter,
    install_log_filter,
    redact,
    redact_error,
    redact_value,
    register_env,
)

ARBITRARY = "q7Zt.wQ2v_Lm9x"
"""A key with no provider's shape: only its value, known from the environment, can find it."""


@pytest.fixture()
def key_var(monkeypatch: pytest.MonkeyPatch) -> str:
    """A variable of a name no rule calls secret, holding :data:`ARBITRARY`, not registered."""
    name = f"BENCHSMITH_TEST_ACCESS_{uuid.uuid4().hex[:8].upper()}"
    monkeypatch.setenv(name, ARBITRARY)
    return name


@pytest.fixture()
def redacting_logs() -> Iterator[None]:
    """The CLI's log redaction, removed again after the test."""
    before = logging.getLogRecordFactory()
    install_log_filter()
    yield
    logging.setLogRecordFactory(before)


def test_a_registered_variable_s_value_is_redacted_wherever_it_appears(key_var: str) -> None:
    text = f"refused {ARBITRARY} (sent as {ARBITRARY})"
    assert redact(text) == text  # neither its name nor its shape says it is a key
    register_env(key_var)
    assert redact(text) == f"refused {REDACTED} (sent as {REDACTED})"


def test_variables_named_as_secrets_are_redacted_and_short_values_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BENCHSMITH_TEST_SERVICE_TOKEN", "p/ss w0rd+")
    monkeypatch.setenv("BENCHSMITH_TEST_FLAG_KEY", "true")
    clean = redact("sent p/ss w0rd+ as p%2Fss%20w0rd%2B; flag true")
    assert clean == f"sent {REDACTED} as {REDACTED}; flag true"


def test_extra_values_are_redacted_longest_first() -> None:
    assert redact("abc-long and abc", ["abc", "abc-long"]) == f"{REDACTED} and {REDACTED}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(sent with Bearer sk-proj-Abc123def456ghi)", f"(sent with Bearer {REDACTED})"),
        ("Authorization: Basic dXNlcjpwYXNz", f"Authorization: Basic {REDACTED}"),
        ('{"authorization": "tok_1234567"}', f'{{"authorization": "{REDACTED}"}}'),
        ("token hf_AbCdEf0123456789XyZ was refused", f"token {REDACTED} was refused"),
        ("key AIzaSyA-0123456789abcdefghijklm", f"key {REDACTED}"),
        ("GET /v1?q=x&key=K3Y&alt=json", f"GET /v1?q=x&key={REDACTED}&alt=json"),
        ('{"api_key": "abcd1234"}', f'{{"api_key": "{REDACTED}"}}'),
        ("x-api-key: s3cr3t-value", f"x-api-key: {REDACTED}"),
        ("https://bot:pa/ss@wiki.example/w", f"https://{REDACTED}@wiki.example/w"),
        ("https://ghp_tok3n@git.example/r", f"https://{REDACTED}@git.example/r"),
    ],
)
def test_credential_shapes_are_redacted_whatever_their_source(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "bearer instruments were issued",
        "an sk-learn-compatible-model",
        "monkey=1&donkey=2",
        "see http://example.com/a?b=c and write to editor@example.com",
        "the hf_hub_download helper",
        "HTTP 400: response_format json_schema is not supported",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_without_patterns_only_the_secrets_themselves_go(key_var: str) -> None:
    register_env(key_var)
    url = f"https://a.example/?key=article-7&x={ARBITRARY}"
    assert redact(url, patterns=False) == f"https://a.example/?key=article-7&x={REDACTED}"


def test_redact_value_reaches_keys_and_nested_values() -> None:
    value = {"sk-abc0123456789xyz": [("Bearer sk-abc0123456789xyz", 3)], "n": None}
    assert redact_value(value) == {REDACTED: [(f"Bearer {REDACTED}", 3)], "n": None}


def test_an_error_in_a_record_is_its_type_and_redacted_message() -> None:
    error = ValueError("HTTP 400: (sent with Bearer sk-abc0123456789xyz)")
    assert redact_error(error) == f"ValueError: HTTP 400: (sent with Bearer {REDACTED})"


def test_benchsmith_errors_are_redacted_when_made(key_var: str) -> None:
    register_env(key_var)
    error = LLMError(f"server said: unknown key {ARBITRARY}")
    assert str(error) == f"server said: unknown key {REDACTED}"
    missing = MissingInputError(f"no file /tmp/{ARBITRARY}.parquet", Path("x"))
    assert ARBITRARY not in str(missing) and missing.path == Path("x")


def test_tables_redact_their_reason_and_detail_columns(tmp_path: Path, key_var: str) -> None:
    register_env(key_var)
    drop = Drop("lveval", "g", "event", f"id-{ARBITRARY}", "questions", "failed", ARBITRARY)
    with TableWriter(tmp_path / "drops.parquet", DROP_SCHEMA) as writer:
        writer.write(drop.to_row())
        writer.write_table(pa.Table.from_pylist([drop.to_row()], schema=DROP_SCHEMA))
    rows = pq.read_table(tmp_path / "drops.parquet").to_pylist()
    assert [r["detail"] for r in rows] == [REDACTED, REDACTED]
    assert rows[0]["item_id"] == f"id-{ARBITRARY}"  # data columns are the stage's business
    assert drop.detail == ARBITRARY  # the caller's row is not changed


def test_json_outputs_are_redacted(tmp_path: Path, key_var: str) -> None:
    register_env(key_var)
    data = {"llm": {"response_format_fallback": f"refused ({ARBITRARY})"}, "n": 2}
    write_json(tmp_path / "stats.json", data)
    write_json_atomic(tmp_path / "report.json", data)
    for name in ("stats.json", "report.json"):
        written = json.loads((tmp_path / name).read_text())
        assert written == {"llm": {"response_format_fallback": f"refused ({REDACTED})"}, "n": 2}


def test_every_log_record_is_redacted_once_installed(
    key_var: str, redacting_logs: None, caplog: pytest.LogCaptureFixture
) -> None:
    register_env(key_var)
    installed = logging.getLogRecordFactory()
    install_log_filter()
    assert logging.getLogRecordFactory() is installed  # wrapped once only
    caplog.set_level(logging.DEBUG)
    other = logging.getLogger("some.library")
    other.debug("headers: %s", {"x-echo": ARBITRARY})
    try:
        raise RuntimeError(f"server said {ARBITRARY}")
    except RuntimeError:
        logging.getLogger("pipelines.test").warning("call failed", exc_info=True)
    other.info("nothing secret: %d", 3)
    assert ARBITRARY not in caplog.text
    assert "RuntimeError: server said REDACTED" in caplog.text
    assert [r.getMessage() for r in caplog.records][::2] == [
        f"headers: {{'x-echo': '{REDACTED}'}}",
        "nothing secret: 3",
    ]
    assert caplog.records[2].args == (3,)  # a clean record keeps its arguments


def test_a_malformed_log_call_is_left_to_its_handler_to_report(redacting_logs: None) -> None:
    make = logging.getLogRecordFactory()
    record = make("pipelines.test", logging.WARNING, __file__, 1, "%d items", ("three",), None)
    assert (record.msg, record.args) == ("%d items", ("three",))  # made, not raised


def test_a_filter_redacts_values_held_outside_the_environment(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("benchsmith.test.filtered")
    logger.addFilter(RedactingFilter(["cx-9f8e7d", ""]))
    try:
        with caplog.at_level(logging.INFO, logger=logger.name):
            logger.info("GET /search?cx=cx-9f8e7d&key=AIza0123")
    finally:
        logger.filters.clear()
    assert caplog.records[0].getMessage() == f"GET /search?cx={REDACTED}&key={REDACTED}"
