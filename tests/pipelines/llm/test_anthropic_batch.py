"""``llm.mode: batch`` with the ``anthropic`` backend against a local stand-in for Anthropic's
Message Batches: the guarantees of the OpenAI path (test_batch.py), through the other provider."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pipelines.errors import LLMError
from pipelines.llm import LLMClient, PromptLibrary
from pipelines.llm.batch_ledger import BatchLedger
from tests.pipelines.llm.test_anthropic import ERROR, anthropic_client, colours, pick, topic_of
from tests.support.anthropic_server import anthropic_server, sent_key
from tests.support.batch_server import BatchScript
from tests.support.canary import ARBITRARY, SK, key_variable, leaks, redacting_logs
from tests.support.openai_server import Finished

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ROOT = Path(__file__).resolve().parents[3]


def client_for(url: str, cache_dir: Path, prompts: PromptLibrary, **overrides: Any) -> LLMClient:
    """A batch-mode anthropic client with its cache in ``cache_dir``; polls wait for nothing."""
    values = {"mode": "batch", "batch_poll_s": 1.0, **overrides}
    return anthropic_client(url, cache_dir, prompts, **values)


def cached(cache_dir: Path) -> dict[str, str]:
    with sqlite3.connect(cache_dir / "cache" / "llm.sqlite") as db:
        return dict(db.execute("SELECT key, text FROM responses"))


def ledger(cache_dir: Path) -> BatchLedger:
    return BatchLedger(cache_dir / "cache" / "llm.sqlite")


@pytest.mark.parametrize("response_format", ["none", "json_schema"])
def test_one_message_batch_per_step_answers_as_the_sync_path_does(
    tmp_path: Path, prompts: PromptLibrary, response_format: str
) -> None:
    asks = [pick(t) for t in ("sea", "sky", "moss", "sea")]
    with anthropic_server(colours, BatchScript(in_progress_polls=2)) as (url, seen):
        batch = client_for(url, tmp_path / "b", prompts, response_format=response_format)
        batched = list(batch.ask_many(asks))
        sync = client_for(url, tmp_path / "s", prompts, mode="sync", concurrency=1,
                          response_format=response_format)  # fmt: skip
        synced = list(sync.ask_many(asks))
    assert [o.value for o in batched] == [o.value for o in synced]
    assert batched[0].value.colours == ["sea", "grey"]
    assert len(seen.created) == 1 and len(seen.inputs[0]) == 3, "one job, duplicates sent once"
    # each request carries the body a synchronous call sends, under the key it caches
    assert sorted(json.dumps(r["params"], sort_keys=True) for r in seen.inputs[0]) == sorted(
        json.dumps(b, sort_keys=True) for b in seen.chat_bodies
    )
    keys = [r["custom_id"] for r in seen.inputs[0]]
    assert all(CUSTOM_ID.match(k) and len(k) == 64 for k in keys)
    assert cached(tmp_path / "b") == cached(tmp_path / "s") and set(keys) == set(
        cached(tmp_path / "b")
    )
    if response_format == "json_schema":
        assert seen.inputs[0][0]["params"]["output_config"]["format"]["type"] == "json_schema"
    stats = batch.stats()
    assert stats["backend"] == "anthropic" and stats["calls"] == sync.stats()["calls"] == 3
    assert stats["batches"] == {"submitted": seen.batch_ids, "resumed": []}
    assert batch.waits == [1.0, 1.0], "polled until the batch ended"
    assert ledger(tmp_path / "b").state(seen.batch_ids[0]) == "completed"


def test_reasks_and_refusals_go_as_further_batches(tmp_path: Path, prompts: PromptLibrary) -> None:
    def reply(body: dict[str, Any], n: int) -> Any:
        if topic_of(body) == "sky" and len(body["messages"]) == 1:
            return "not json"
        if topic_of(body) == "moss" and len(body["messages"]) == 1:
            return Finished("", "refusal")
        return colours(body, n)

    with anthropic_server(reply) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcomes = list(client.ask_many([pick(t) for t in ("sea", "sky", "moss")]))
    assert [o.asks for o in outcomes] == [1, 2, 2] and all(o.ok for o in outcomes)
    assert [len(x) for x in seen.inputs] == [3, 2]
    assert client.stats()["unfinished"] == 1 and client.stats()["malformed"] == 1


def test_an_expired_batch_keeps_its_answers_and_only_the_rest_is_resubmitted(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    asks = [pick(t) for t in ("a", "b", "c", "d", "e")]
    with anthropic_server(colours, BatchScript(expire_after={1: 2})) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcomes = list(client.ask_many(asks))
    assert all(o.ok for o in outcomes)
    assert [len(x) for x in seen.inputs] == [5, 3]
    first = {x["custom_id"] for x in seen.inputs[0][:2]}
    assert first.isdisjoint(x["custom_id"] for x in seen.inputs[1])
    assert ledger(tmp_path).state(seen.batch_ids[0]) == "expired"
    assert client.stats()["calls"] == 5


def test_errored_requests_fail_their_asks_and_are_not_cached(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def reply(body: dict[str, Any], n: int) -> Any:
        if topic_of(body) == "long":
            return (400, {}, ERROR.format(kind="invalid_request_error", message="too long"))
        return colours(body, n)

    def fail_line(body: dict[str, Any]) -> str | None:
        return "overloaded" if topic_of(body) == "busy" else None

    asks = [pick(t) for t in ("sea", "long", "busy")]
    with anthropic_server(reply, BatchScript(fail_line=fail_line)) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcomes = list(client.ask_many(asks))
    assert [o.error for o in outcomes] == [
        "",
        "call_failed: invalid_request_error: too long",
        "call_failed: api_error: overloaded",
    ]
    assert len(cached(tmp_path)) == 1 and len(seen.created) == 1


def test_a_cancelled_batch_stops_with_its_id_and_a_rerun_submits_again(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    asks = [pick("sea"), pick("sky")]
    with anthropic_server(colours, BatchScript(final_status={1: "cancelled"})) as (url, seen):
        with pytest.raises(LLMError, match=r"batch msgbatch_0001 cancelled: 2 canceled"):
            list(client_for(url, tmp_path, prompts).ask_many(asks))
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    assert all(o.ok for o in outcomes) and len(seen.created) == 2
    assert ledger(tmp_path).state("msgbatch_0001") == "cancelled"
    assert rerun.stats()["batches"] == {"submitted": ["msgbatch_0002"], "resumed": []}


def test_a_run_stopped_while_polling_resumes_its_recorded_batch(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def killed(seconds: float) -> None:
        raise KeyboardInterrupt

    asks = [pick(t) for t in ("sea", "sky", "moss")]
    with anthropic_server(colours, BatchScript(in_progress_polls=2)) as (url, seen):
        first = client_for(url, tmp_path, prompts)
        first._sleep = killed
        with pytest.raises(KeyboardInterrupt):
            list(first.ask_many(asks))
        assert len(seen.created) == 1 and cached(tmp_path) == {}
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    assert all(o.ok for o in outcomes) and len(seen.created) == 1
    assert seen.lists == 0, "a recorded batch needs no search"
    assert rerun.stats()["batches"] == {"submitted": [], "resumed": ["msgbatch_0001"]}
    assert rerun.stats()["calls"] == 3


def test_a_killed_process_is_resumed_without_a_second_submission(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    script = BatchScript(in_progress_polls=10_000)
    child = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pydantic import BaseModel\n"
        "from pipelines.llm import Ask, LLMClient, PromptLibrary\n"
        "from tests.pipelines.llm.conftest import settings_for\n"
        "class Colours(BaseModel):\n"
        "    colours: list[str]\n"
        "url, tmp = sys.argv[1], Path(sys.argv[2])\n"
        "s = settings_for(url, tmp, backend='anthropic', model='claude-test', mode='batch',\n"
        "                 batch_poll_s=0.02)\n"
        "client = LLMClient.from_settings(s, prompts=PromptLibrary(tmp / 'prompts'))\n"
        "asks = [Ask('t/pick', {'n': 2, 'topic': t}, Colours) for t in ('sea', 'sky')]\n"
        "list(client.ask_many(asks))\n"
    )
    with anthropic_server(colours, script) as (url, seen):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCHSMITH_NO_PROGRESS": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-c", child, url, str(tmp_path)],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 60
            while seen.polls < 3 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=10)
        assert len(seen.created) == 1
        script.in_progress_polls = 0
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many([pick("sea"), pick("sky")]))
    assert all(o.ok for o in outcomes) and len(seen.created) == 1
    assert rerun.stats()["batches"] == {"submitted": [], "resumed": ["msgbatch_0001"]}


def test_a_run_killed_between_create_and_record_finds_its_batch_by_its_intent(
    tmp_path: Path, prompts: PromptLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = BatchLedger.record

    def killed(self: BatchLedger, *args: Any) -> None:
        raise KeyboardInterrupt

    asks = [pick(t) for t in ("sea", "sky")]
    with anthropic_server(colours, BatchScript(in_progress_polls=1)) as (url, seen):
        # another process's batch of another size, created meanwhile, is not taken for it
        other = client_for(url, tmp_path / "other", prompts)
        list(other.ask_many([pick("fern")]))
        monkeypatch.setattr(BatchLedger, "record", killed)
        with pytest.raises(KeyboardInterrupt):
            list(client_for(url, tmp_path, prompts).ask_many(asks))
        monkeypatch.setattr(BatchLedger, "record", record)
        assert len(seen.created) == 2
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    assert all(o.ok for o in outcomes)
    assert len(seen.created) == 2 and seen.lists == 1
    assert rerun.stats()["batches"] == {"submitted": [], "resumed": ["msgbatch_0002"]}


def test_two_batches_that_could_be_the_unrecorded_one_stop_the_run_naming_both(
    tmp_path: Path, prompts: PromptLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = BatchLedger.record

    def killed(self: BatchLedger, *args: Any) -> None:
        raise KeyboardInterrupt

    asks = [pick(t) for t in ("sea", "sky")]
    with anthropic_server(colours, BatchScript(in_progress_polls=5)) as (url, seen):
        monkeypatch.setattr(BatchLedger, "record", killed)
        with pytest.raises(KeyboardInterrupt):
            list(client_for(url, tmp_path, prompts).ask_many(asks))
        with pytest.raises(KeyboardInterrupt):  # another process, the same number of requests
            list(client_for(url, tmp_path / "other", prompts).ask_many(asks[::-1]))
        monkeypatch.setattr(BatchLedger, "record", record)
        with pytest.raises(LLMError, match=r"msgbatch_0002, msgbatch_0001\. Cancel the ones"):
            list(client_for(url, tmp_path, prompts).ask_many(asks))
        client_for(url, tmp_path, prompts).backend.sdk.messages.batches.cancel("msgbatch_0002")
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    assert all(o.ok for o in outcomes) and len(seen.created) == 2
    assert rerun.stats()["batches"]["resumed"] == ["msgbatch_0001"]


def test_results_naming_requests_the_batch_was_never_given_stop_the_stage(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    stray = [f"stray-{i}" for i in range(5)]
    asks = [pick(t) for t in ("sea", "sky")]
    with anthropic_server(colours, BatchScript(stray_ids={1: stray})) as (url, seen):
        with pytest.raises(LLMError) as stopped:
            list(client_for(url, tmp_path, prompts).ask_many(asks))
        assert len(cached(tmp_path)) == 2, "the batch's own answers are kept"
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    message = str(stopped.value)
    assert "batch msgbatch_0001 answered 5 requests it was never given" in message
    assert "stray-0, stray-1, stray-2 and 2 more" in message and "stray-3" not in message
    assert all(o.ok for o in outcomes) and len(seen.created) == 1
    assert rerun.stats()["cache_hits"] == 2


def test_a_model_refusing_temperature_in_a_batch_is_sent_again_without_it(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def reply(body: dict[str, Any], n: int) -> Any:
        if "temperature" in body:
            message = "`temperature` is deprecated for this model."
            return (400, {}, ERROR.format(kind="invalid_request_error", message=message))
        return colours(body, n)

    with anthropic_server(reply) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcomes = list(client.ask_many([pick("sea"), pick("sky")]))
    assert all(o.ok for o in outcomes)
    assert [["temperature" in r["params"] for r in x] for x in seen.inputs] == [
        [True, True],
        [False, False],
    ]


@pytest.mark.parametrize("key", [SK, ARBITRARY], ids=["sk-shaped", "arbitrary"])
def test_a_key_the_batches_echo_reaches_no_outcome_cache_ledger_stats_log_or_error(
    tmp_path: Path,
    prompts: PromptLibrary,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    key: str,
) -> None:
    variable = key_variable()
    monkeypatch.setenv(variable, key)
    caplog.set_level("DEBUG")

    def reply(body: dict[str, Any], n: int) -> Any:
        if topic_of(body) == "sea":
            return colours(body, n)
        message = f"refused (x-api-key: {key}); {key} is not a key"
        return 401, {}, ERROR.format(kind="authentication_error", message=message)

    def fail_line(body: dict[str, Any]) -> str | None:
        return f"scripted refusal of {key}" if topic_of(body) == "kelp" else None

    def refuse(method: str, path: str, headers: dict[str, str]) -> Any:
        if method == "POST" and path == "/v1/messages/batches":
            error = ERROR.format(kind="invalid_request_error", message=f"bad {sent_key(headers)}")
            return 400, {"x-echo": sent_key(headers)}, error
        return None

    errors = []
    with redacting_logs():
        with anthropic_server(reply, BatchScript(fail_line=fail_line)) as (url, seen):
            client = client_for(url, tmp_path / "a", prompts, api_key_env=variable)
            outcomes = list(client.ask_many([pick(t) for t in ("sea", "sky", "kelp")]))
            stats = json.dumps(client.stats())
            client.cache.close()
        with anthropic_server(colours, BatchScript(stray_ids={1: [key]})) as (url, _):
            client = client_for(url, tmp_path / "b", prompts, api_key_env=variable)
            with pytest.raises(LLMError) as stray:
                list(client.ask_many([pick("sea")]))
            errors.append(str(stray.value))
        with anthropic_server(colours, BatchScript(refuse=refuse)) as (url, _):
            client = client_for(url, tmp_path / "c", prompts, api_key_env=variable)
            with pytest.raises(LLMError) as refused:
                list(client.ask_many([pick("sea")]))
            errors.append(str(refused.value))
    assert {sent_key(h) for h in seen.headers} == {key}  # it was sent
    assert [o.ok for o in outcomes] == [True, False, False]
    assert "REDACTED is not a key" in outcomes[1].error
    assert outcomes[2].error == "call_failed: api_error: scripted refusal of REDACTED"
    assert "never given (custom_id REDACTED)" in errors[0]
    assert "creating a message batch failed" in errors[1] and "REDACTED" in errors[1]
    with sqlite3.connect(tmp_path / "a" / "cache" / "llm.sqlite") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert {"batch_jobs", "batch_job_keys", "batch_intents"} <= tables
    texts = [caplog.text, stats, *errors, *(r.getMessage() for r in caplog.records)]
    texts += [o.error for o in outcomes]
    assert leaks([key], folders=[tmp_path], texts=texts) == []
