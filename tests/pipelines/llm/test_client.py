"""The LLM client against a real local OpenAI-compatible HTTP server that misbehaves on purpose."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from pipelines.errors import LLMError
from pipelines.llm import Ask, LLMClient, PromptLibrary, TemplateBackend
from pipelines.llm.usage import answers_line
from tests.pipelines.llm.conftest import client_for, settings_for
from tests.support.openai_server import openai_server

GOOD = '{"colours": ["red", "green", "blue"]}'


class Colours(BaseModel):
    colours: list[str]


class Value(BaseModel):
    value: int


def pick(topic: str = "sea", n: int = 3) -> Ask[Colours]:
    return Ask("t/pick", {"n": n, "topic": topic}, Colours)


def test_valid_answer_is_parsed_and_counted(tmp_path: Path, prompts: PromptLibrary) -> None:
    with openai_server(lambda body, n: GOOD) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcome = client.ask(pick())
    assert outcome.ok and outcome.value.colours == ["red", "green", "blue"]
    assert seen.count == 1
    body = seen.bodies[0]
    assert body["model"] == "local-test" and body["seed"] == 0 and body["temperature"] == 0
    assert body["messages"][0] == {"role": "system", "content": "You answer with JSON only."}
    stats = client.stats()
    assert stats["asks"] == 1 and stats["calls"] == 1 and stats["failed"] == 0
    assert stats["prompt_tokens"] > 0 and stats["completion_tokens"] == len(GOOD.split())
    assert set(stats["prompt_versions"]) == {"t/pick"}


def test_429_honours_retry_after(tmp_path: Path, prompts: PromptLibrary) -> None:
    def reply(body: dict, n: int):
        return (
            (429, {"Retry-After": "7"}, '{"error": {"message": "slow down"}}') if n == 1 else GOOD
        )

    with openai_server(reply) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcome = client.ask(pick())
    assert outcome.ok and seen.count == 2
    assert client.waits == [7.0]
    assert client.stats()["retries"] == 1


def test_5xx_is_retried_with_backoff_then_recorded_as_failed(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    with openai_server(lambda body, n: (503, {}, '{"error": {"message": "busy"}}')) as (url, seen):
        client = client_for(url, tmp_path, prompts, retries=3, backoff_s=1.0)
        outcome = client.ask(pick())
    assert not outcome.ok
    assert outcome.error == "call_failed: HTTP 503 after 4 attempts"
    assert seen.count == 4
    # exponential backoff with jitter: each wait in [base * 2**k / 2, base * 2**k)
    assert len(client.waits) == 3
    for k, wait in enumerate(client.waits):
        assert 2**k / 2 <= wait < 2**k
    stats = client.stats()
    assert stats["failed"] == 1 and stats["failure_reasons"] == {"call_failed": 1}


def test_rejected_request_is_not_retried(tmp_path: Path, prompts: PromptLibrary) -> None:
    reply = (400, {}, '{"error": {"message": "context too long"}}')
    with openai_server(lambda body, n: reply) as (url, seen):
        outcome = client_for(url, tmp_path, prompts).ask(pick())
    assert seen.count == 1
    assert outcome.error.startswith("call_failed: HTTP 400") and "context too long" in outcome.error


def test_timeout_is_retried_then_failed(tmp_path: Path, prompts: PromptLibrary) -> None:
    with openai_server(lambda body, n: GOOD, latency_s=1.0) as (url, _):
        client = client_for(url, tmp_path, prompts, timeout_s=0.2, retries=1)
        outcome = client.ask(pick())
    assert outcome.error == "call_failed: timeout after 2 attempts"


def test_refused_key_stops_with_the_variable_name_not_the_key(
    tmp_path: Path, prompts: PromptLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-123456")
    reply = (401, {}, '{"error": {"message": "bad key sk-canary-123456"}}')
    with openai_server(lambda body, n: reply) as (url, seen), pytest.raises(LLMError) as caught:
        client_for(url, tmp_path, prompts).ask(pick())
    assert "OPENAI_API_KEY" in str(caught.value)
    assert "sk-canary" not in str(caught.value)
    assert seen.headers[0]["authorization"] == "Bearer sk-canary-123456"


def test_unknown_model_stops_the_stage(tmp_path: Path, prompts: PromptLibrary) -> None:
    reply = (404, {}, '{"error": {"message": "no model"}}')
    with (
        openai_server(lambda body, n: reply) as (url, _),
        pytest.raises(LLMError, match="no model 'local-test'"),
    ):
        client_for(url, tmp_path, prompts).ask(pick())


def test_broken_json_is_reasked_with_the_reason(tmp_path: Path, prompts: PromptLibrary) -> None:
    answers = iter(['Sure! {"colours": ["red", "gr', GOOD])
    with openai_server(lambda body, n: next(answers)) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcome = client.ask(pick())
    assert outcome.ok and outcome.asks == 2
    reask = seen.bodies[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": 'Sure! {"colours": ["red", "gr'}
    assert "invalid JSON" in reask[-1]["content"]
    assert client.stats()["reasks"] == 1


def test_answers_still_unusable_after_reasks_are_recorded_not_raised(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    with openai_server(lambda body, n: '{"colors": "red"}') as (url, seen):
        client = client_for(url, tmp_path, prompts, reasks=2)
        outcome = client.ask(pick())
    assert not outcome.ok and outcome.asks == 3 and seen.count == 3
    assert outcome.error.startswith("invalid_answer: the JSON does not match the format: colours")
    assert outcome.raw == '{"colors": "red"}'
    assert client.stats()["failure_reasons"] == {"invalid_answer": 1}


def test_second_run_is_served_from_the_cache_but_an_unusable_answer(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    answers = iter(["not json", GOOD])
    asks = [pick("sea"), pick("sky")]
    with openai_server(lambda body, n: next(answers, GOOD)) as (url, seen):
        first = list(client_for(url, tmp_path, prompts, concurrency=1).ask_many(asks))
        calls = seen.count
        rerun = client_for(url, tmp_path, prompts)
        second = list(rerun.ask_many(asks))
        third = client_for(url, tmp_path, prompts)
        list(third.ask_many(asks))
    assert calls == 3  # a re-ask for the first question
    # the rerun asks the first question again (its cached answer was malformed), once
    assert seen.count == calls + 1
    assert seen.bodies[-1]["messages"] == seen.bodies[0]["messages"]
    assert [o.value for o in second] == [o.value for o in first]
    assert (rerun.stats()["calls"], rerun.stats()["cache_hits"]) == (1, 1)
    # its good answer replaced the bad one: the third run is served from the cache alone
    assert (third.stats()["calls"], third.stats()["cache_hits"]) == (0, 2)


def test_editing_one_prompt_reasks_only_its_questions(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def reply(body: dict, n: int) -> str:
        return GOOD if "colours" in body["messages"][-1]["content"] else '{"value": 4}'

    asks = [pick("sea"), Ask("t/other", {"topic": "sea"}, Value), pick("sky")]
    with openai_server(reply) as (url, seen):
        list(client_for(url, tmp_path, prompts).ask_many(asks))
        assert seen.count == 3
        path = prompts.path("t/pick")
        path.write_text(path.read_text().replace("Name", "List"))
        rerun = client_for(url, tmp_path, PromptLibrary(prompts.root))
        list(rerun.ask_many(asks))
    assert seen.count == 5
    assert {json.dumps(b["messages"]) for b in seen.bodies[3:]} == {
        json.dumps(b["messages"]).replace("Name", "List")
        for b in seen.bodies[:3]
        if "colours" in json.dumps(b)
    }
    assert rerun.stats()["by_prompt"]["t/other"]["cache_hits"] == 1


def test_many_asks_run_concurrently_and_keep_their_order(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    in_flight, peak, lock = [0], [0], threading.Lock()

    def reply(body: dict, n: int) -> str:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.05)
        with lock:
            in_flight[0] -= 1
        topic = body["messages"][-1]["content"].rsplit("Topic: ", 1)[1].rstrip(".")
        return json.dumps({"colours": [topic]})

    topics = [f"t{i}" for i in range(16)]
    with openai_server(reply) as (url, _):
        client = client_for(url, tmp_path, prompts, concurrency=4)
        outcomes = list(client.ask_many(pick(t) for t in topics))
    assert [o.value.colours[0] for o in outcomes] == topics
    assert 2 <= peak[0] <= 4


def test_template_backend_refuses_prompts_it_cannot_answer(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    settings = settings_for("http://127.0.0.1:9/v1", tmp_path, backend="template")
    backend = TemplateBackend({"t/other": lambda v: json.dumps({"value": len(v["topic"])})})
    client = LLMClient(settings, backend, prompts=prompts)
    assert client.ask(Ask("t/other", {"topic": "abc"}, Value)).value.value == 3
    with pytest.raises(LLMError, match="cannot answer prompt 't/pick'"):
        client.ask(pick())


def test_the_key_reaches_the_server_but_no_cache_stats_or_log(
    tmp_path: Path,
    prompts: PromptLibrary,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    canary = "sk-canary-llm-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    answers = iter(["no json here", GOOD])
    caplog.set_level("DEBUG")
    with openai_server(lambda body, n: next(answers, GOOD)) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcome = client.ask(pick())
        client.cache.close()
    assert outcome.ok
    assert all(h["authorization"] == f"Bearer {canary}" for h in seen.headers)
    for path in (tmp_path / "cache").iterdir():
        assert canary.encode() not in path.read_bytes(), path.name
    assert canary not in json.dumps(client.stats())
    assert canary not in caplog.text


def test_a_check_that_raises_fails_that_item_not_the_stage(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def check(answer: Value) -> str | None:
        if answer.value == 2:
            raise KeyError("missing entry")
        return None

    settings = settings_for("http://127.0.0.1:9/v1", tmp_path, backend="template", reasks=2)
    backend = TemplateBackend({"t/other": lambda v: json.dumps({"value": len(v["topic"])})})
    client = LLMClient(settings, backend, prompts=prompts)
    asks = [Ask("t/other", {"topic": t}, Value, check) for t in ("a", "bb", "ccc")]
    outcomes = list(client.ask_many(asks))
    assert [o.ok for o in outcomes] == [True, False, True]
    failed = outcomes[1]
    assert failed.error == "check_raised: KeyError: 'missing entry'"
    assert failed.asks == 1 and failed.raw == '{"value": 2}'
    assert client.stats()["failure_reasons"] == {"check_raised": 1}


def test_an_interrupt_in_a_check_is_not_swallowed(tmp_path: Path, prompts: PromptLibrary) -> None:
    def check(answer: Value) -> str | None:
        raise KeyboardInterrupt

    settings = settings_for("http://127.0.0.1:9/v1", tmp_path, backend="template")
    backend = TemplateBackend({"t/other": lambda v: json.dumps({"value": 1})})
    client = LLMClient(settings, backend, prompts=prompts)
    with pytest.raises(KeyboardInterrupt):
        client.ask(Ask("t/other", {"topic": "a"}, Value, check))


def test_answers_are_counted_as_parsed_malformed_or_failing_their_check(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    replies = ["no json here", '{"colours": ["red"]}', '{"colours": ["grey"]}', GOOD]

    def check(answer: Colours) -> str | None:
        if len(answer.colours) != 3:
            return f"give 3 colours, not {len(answer.colours)} ({answer.colours[0]!r})"
        return None

    with openai_server(lambda body, n: replies[n - 1]) as (url, seen):
        client = client_for(url, tmp_path, prompts, reasks=3)
        outcome = client.ask(Ask("t/pick", {"n": 3, "topic": "sea"}, Colours, check))
    assert outcome.ok and outcome.asks == 4 and seen.count == 4
    stats = client.stats()
    assert (stats["parsed"], stats["malformed"], stats["failed_checks"]) == (3, 1, 2)
    # the two check failures differ only in the values they name: one reason class
    assert stats["check_reasons"] == {"give N colours, not N (…)": 2}
    assert stats["by_prompt"]["t/pick"]["check_reasons"] == stats["check_reasons"]
    assert answers_line(stats) == (
        "3 answers parsed, 2 failed checks: give N colours, not N (…) ×2, 1 malformed"
    )
