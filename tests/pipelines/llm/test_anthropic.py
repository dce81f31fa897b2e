"""The ``anthropic`` backend against a local stand-in for Anthropic's Messages API: the request
it sends, the answers it reads, how each failure maps, and the key kept out of every record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from pipelines.errors import LLMError
from pipelines.llm import Ask, CallFailed, LLMClient, LLMSettings, PromptLibrary, ResponseCache
from pipelines.llm.backends.anthropic_api import AnthropicBackend, server_root
from pipelines.llm.pacing import Pacers
from tests.pipelines.llm.conftest import settings_for
from tests.support.anthropic_server import anthropic_server, sent_key
from tests.support.canary import ARBITRARY, SK, key_variable, leaks, redacting_logs
from tests.support.openai_server import Finished

ERROR = '{{"type": "error", "error": {{"type": "{kind}", "message": "{message}"}}}}'


class Colours(BaseModel):
    colours: list[str]


def pick(topic: str) -> Ask[Colours]:
    return Ask("t/pick", {"n": 2, "topic": topic}, Colours)


def topic_of(body: dict[str, Any]) -> str:
    first_user = next(m for m in body["messages"] if m["role"] == "user")
    return first_user["content"].rsplit("Topic: ", 1)[1].rstrip(".")


def colours(body: dict[str, Any], n: int) -> str:
    return json.dumps({"colours": [topic_of(body), "grey"]})


def anthropic_settings(url: str, tmp_path: Path, **overrides: Any) -> LLMSettings:
    values = {"backend": "anthropic", "model": "claude-test", **overrides}
    return settings_for(url, tmp_path, **values)


def anthropic_client(
    url: str, tmp_path: Path, prompts: PromptLibrary, **overrides: Any
) -> LLMClient:
    """A client of the anthropic backend whose backoff waits are recorded, not slept."""
    settings = anthropic_settings(url, tmp_path, **overrides)
    waits: list[float] = []
    client = LLMClient(
        settings,
        AnthropicBackend(settings),
        cache=ResponseCache(settings.cache),
        prompts=prompts,
        sleep=waits.append,
        pacers=Pacers(),  # the test's own limits: a later server may reuse a port
    )
    client.waits = waits  # type: ignore[attr-defined]
    return client


def test_system_goes_in_system_the_schema_in_output_config_and_no_seed_is_sent(
    tmp_path: Path, prompts: PromptLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    with anthropic_server(colours) as (url, seen):
        client = anthropic_client(
            url, tmp_path, prompts, response_format="json_schema", temperature=0.5, seed=7
        )
        outcome = client.ask(pick("sea"))
    assert outcome.ok and outcome.value.colours == ["sea", "grey"]
    [body] = seen.chat_bodies
    assert body["system"] == "You answer with JSON only."
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert body["messages"][0]["content"].endswith("Topic: sea.")
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("claude-test", 0.5, 1024)
    assert "seed" not in body and "response_format" not in body
    schema = body["output_config"]["format"]
    assert schema["type"] == "json_schema"
    assert schema["schema"]["additionalProperties"] is False
    assert set(schema["schema"]["properties"]) == {"colours"}
    headers = seen.headers[-1]
    assert sent_key(headers) == "sk-ant-test-0123456789" and headers["anthropic-version"]


def test_the_key_variable_defaults_by_backend_and_a_set_one_wins() -> None:
    assert LLMSettings(backend="anthropic").key_env == "ANTHROPIC_API_KEY"
    assert LLMSettings(backend="openai").key_env == "OPENAI_API_KEY"
    assert LLMSettings(backend="anthropic", api_key_env="CLAUDE_KEY").key_env == "CLAUDE_KEY"
    with pytest.raises(ValidationError, match="Anthropic's Messages API takes 0 to 1"):
        LLMSettings(backend="anthropic", temperature=1.5)


def test_a_base_url_ending_in_v1_reaches_the_same_server(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    assert server_root(None) == "https://api.anthropic.com"
    assert server_root("http://127.0.0.1:9/v1/") == "http://127.0.0.1:9"
    with anthropic_server(colours) as (url, seen):
        outcome = anthropic_client(url + "/v1", tmp_path, prompts).ask(pick("sky"))
    assert outcome.ok and len(seen.chat_bodies) == 1


@pytest.mark.parametrize(
    ("stop_reason", "finish_reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause_turn"),
    ],
)
def test_stop_reason_becomes_finish_reason(
    tmp_path: Path, prompts: PromptLibrary, stop_reason: str, finish_reason: str
) -> None:
    with anthropic_server(lambda body, n: Finished('{"colours": []}', stop_reason)) as (url, _):
        client = anthropic_client(url, tmp_path, prompts)
        response = client.chat(client.request("t/pick", {"n": 1, "topic": "sea"}, Colours))
    assert response.finish_reason == finish_reason
    assert response.text == '{"colours": []}' and response.completion_tokens == 2


def test_a_refusal_is_unfinished_and_re_asked(tmp_path: Path, prompts: PromptLibrary) -> None:
    def reply(body: dict[str, Any], n: int) -> Any:
        return Finished("", "refusal") if n == 1 else colours(body, n)

    with anthropic_server(reply) as (url, seen):
        client = anthropic_client(url, tmp_path, prompts)
        outcome = client.ask(pick("sea"))
    assert outcome.ok and outcome.asks == 2
    assert "content filter" in seen.chat_bodies[1]["messages"][-1]["content"]
    assert client.stats()["unfinished"] == 1


@pytest.mark.parametrize("status", [429, 500, 529])
def test_busy_and_overloaded_answers_are_retried_after_the_wait_asked(
    tmp_path: Path, prompts: PromptLibrary, status: int
) -> None:
    def reply(body: dict[str, Any], n: int) -> Any:
        if n == 1:
            error = ERROR.format(kind="overloaded_error", message="busy")
            return (status, {"retry-after": "3"}, error)
        return colours(body, n)

    with anthropic_server(reply) as (url, seen):
        client = anthropic_client(url, tmp_path, prompts)
        outcome = client.ask(pick("sea"))
    assert outcome.ok and len(seen.chat_bodies) == 2
    assert client.waits == [3.0]
    assert client.stats()["retries"] == 1
    # paced as the openai backend is: a 429 (only) cuts the endpoint's limit of 4 to 3
    paced = client.stats()["concurrency"]
    assert paced["adaptive"] and paced["ceiling"] == 4
    assert (paced["rate_limited"], paced["min"]) == ((1, 3) if status == 429 else (0, 4))


def test_refused_keys_unknown_models_and_bad_requests_map_like_the_openai_backend(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    answers = {
        "key": (401, {}, ERROR.format(kind="authentication_error", message="invalid x-api-key")),
        "model": (404, {}, ERROR.format(kind="not_found_error", message="model: claude-test")),
        "long": (400, {}, ERROR.format(kind="invalid_request_error", message="prompt too long")),
    }
    with anthropic_server(lambda body, n: answers[topic_of(body)]) as (url, seen):
        client = anthropic_client(url, tmp_path, prompts, api_key_env="CLAUDE_TEST_KEY")
        with pytest.raises(LLMError, match=r"refused the key \(HTTP 401\); set CLAUDE_TEST_KEY"):
            client.ask(pick("key"))
        with pytest.raises(LLMError, match=r"no model 'claude-test' \(HTTP 404\)"):
            client.ask(pick("model"))
        request = client.request("t/pick", {"n": 2, "topic": "long"}, Colours)
        with pytest.raises(CallFailed, match="HTTP 400: prompt too long"):
            client.chat(request)
    assert len(seen.chat_bodies) == 3, "none of them retried"


def test_a_model_refusing_the_schema_is_sent_none_from_then_on(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def reply(body: dict[str, Any], n: int) -> Any:
        if "output_config" in body:
            message = "output_config.format: structured outputs are not supported by this model"
            return (400, {}, ERROR.format(kind="invalid_request_error", message=message))
        return colours(body, n)

    with anthropic_server(reply) as (url, seen):
        client = anthropic_client(url, tmp_path, prompts, response_format="json_schema")
        outcomes = [client.ask(pick("sea")), client.ask(pick("sky"))]
    assert all(o.ok for o in outcomes)
    assert ["output_config" in b for b in seen.chat_bodies] == [True, False, False]
    assert "json_schema refused" in client.stats()["response_format_fallback"]


def test_a_reply_that_is_not_a_message_fails_the_call(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    with anthropic_server(colours) as (url, _):
        client = anthropic_client(url, tmp_path, prompts)
        from pipelines.llm.backends.anthropic_api import message_response

        with pytest.raises(CallFailed, match="without a message"):
            message_response(json.loads('{"completion": "hi"}'), None)
        assert client.ask(pick("sea")).ok


@pytest.mark.parametrize("key", [SK, ARBITRARY], ids=["sk-shaped", "arbitrary"])
def test_a_key_the_server_echoes_reaches_no_outcome_cache_stats_or_log(
    tmp_path: Path,
    prompts: PromptLibrary,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    key: str,
) -> None:
    variable = key_variable()
    monkeypatch.setenv(variable, key)
    caplog.set_level("DEBUG")
    statuses = {"sky": 400, "moss": 429, "fern": 529}

    def reply(body: dict[str, Any], n: int) -> Any:
        if topic_of(body) == "sea":
            return f'{{"colours": ["sea", "{key}"]}}'  # an answer quoting the key
        sent = sent_key(seen.headers[-1])
        headers = {"x-echo-api-key": sent, "retry-after": "0"}
        message = f"refused (sent with x-api-key: {sent}); {sent} is not a key"
        error = ERROR.format(kind="invalid_request_error", message=message)
        return statuses[topic_of(body)], headers, error

    with redacting_logs(), anthropic_server(reply) as (url, seen):
        client = anthropic_client(url, tmp_path, prompts, api_key_env=variable, retries=1)
        outcomes = [client.ask(pick(t)) for t in ("sea", "sky", "moss", "fern")]
        stats = json.dumps(client.stats())
        client.cache.close()
    assert {sent_key(h) for h in seen.headers} == {key}  # it was sent
    assert outcomes[0].ok and outcomes[0].value.colours == ["sea", "REDACTED"]
    assert [o.ok for o in outcomes[1:]] == [False, False, False]
    assert "REDACTED is not a key" in outcomes[1].error
    assert outcomes[2].error == "call_failed: HTTP 429 after 2 attempts"
    texts = [caplog.text, stats, *(o.error for o in outcomes), *(o.raw for o in outcomes)]
    assert leaks([key], folders=[tmp_path / "cache"], texts=texts) == []


def test_a_model_refusing_temperature_is_sent_none_from_then_on(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def reply(body: dict[str, Any], n: int) -> Any:
        if "temperature" in body:
            message = "`temperature` is deprecated for this model."
            return (400, {}, ERROR.format(kind="invalid_request_error", message=message))
        return colours(body, n)

    with anthropic_server(reply) as (url, seen):
        client = anthropic_client(url, tmp_path, prompts)
        outcomes = [client.ask(pick("sea")), client.ask(pick("sky"))]
    assert all(o.ok for o in outcomes)
    assert ["temperature" in b for b in seen.chat_bodies] == [True, False, False]
    assert seen.chat_bodies[0]["temperature"] == 0.0
    assert "temperature refused" in client.backend.dropped


def test_the_settings_build_the_anthropic_backend_and_its_dry_run_keys(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    from pipelines.llm.dry_run import dry_run
    from pipelines.llm.tokens import TokenCounter

    settings = anthropic_settings("http://127.0.0.1:9", tmp_path)
    client = LLMClient.from_settings(settings, prompts=prompts)
    assert isinstance(client.backend, AnthropicBackend)
    assert (client.backend.name, client.backend.model) == ("anthropic", "claude-test")
    with dry_run(TokenCounter()):
        dry = LLMClient.from_settings(
            settings, responders={"t/pick": lambda v: '{"colours": []}'}, prompts=prompts
        )
    request = dry.request("t/pick", {"n": 1, "topic": "sea"}, Colours)
    # a dry run keys its questions as the run will, so the cache answers what it holds
    assert (dry.backend.name, dry.backend.model) == ("anthropic", "claude-test")
    assert dry._key(request) == client._key(request)
