"""``llm.mode: batch`` against a local stand-in for OpenAI's Files and Batches endpoints."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pipelines.errors import LLMError
from pipelines.llm import Ask, LLMClient, PromptLibrary, TemplateBackend
from pipelines.llm.batch_ledger import BatchLedger
from tests.pipelines.llm.conftest import client_for as llm_client_for
from tests.pipelines.llm.conftest import settings_for
from tests.support.batch_server import BatchScript, batch_server
from tests.support.canary import ARBITRARY, SK, Echo, echoed, key_variable, leaks, redacting_logs

ROOT = Path(__file__).resolve().parents[3]


class Colours(BaseModel):
    colours: list[str]


def pick(topic: str) -> Ask[Colours]:
    return Ask("t/pick", {"n": 2, "topic": topic}, Colours)


def topic_of(body: dict[str, Any]) -> str:
    first_user = next(m for m in body["messages"] if m["role"] == "user")
    return first_user["content"].rsplit("Topic: ", 1)[1].rstrip(".")


def colours(body: dict[str, Any], n: int) -> str:
    return json.dumps({"colours": [topic_of(body), "grey"]})


def client_for(url: str, cache_dir: Path, prompts: PromptLibrary, **overrides: Any) -> LLMClient:
    """A batch-mode client for the stand-in with its cache in ``cache_dir``; polls wait for
    nothing."""
    return llm_client_for(
        url, cache_dir, prompts, **{"mode": "batch", "batch_poll_s": 1.0, **overrides}
    )


def cached(cache_dir: Path) -> dict[str, str]:
    """The response cache's keys and texts."""
    with sqlite3.connect(cache_dir / "cache" / "llm.sqlite") as db:
        return dict(db.execute("SELECT key, text FROM responses"))


COUNTERS = ("asks", "calls", "cache_hits", "reasks", "failed", "prompt_tokens", "completion_tokens")


def counters(client: LLMClient) -> dict[str, int]:
    stats = client.stats()
    return {name: stats[name] for name in COUNTERS}


@pytest.mark.parametrize("response_format", ["none", "json_schema"])
def test_batch_answers_equal_the_sync_path_and_share_its_cache(
    tmp_path: Path, prompts: PromptLibrary, response_format: str
) -> None:
    asks = [pick(t) for t in ("sea", "sky", "moss", "sea")]
    with batch_server(colours, BatchScript(in_progress_polls=2)) as (url, seen):
        priced = {"input_cost_per_mtok": 2.0, "output_cost_per_mtok": 8.0}
        batch = client_for(url, tmp_path / "b", prompts, response_format=response_format, **priced)
        batched = list(batch.ask_many(asks))
        sync = client_for(
            url,
            tmp_path / "s",
            prompts,
            mode="sync",
            concurrency=1,
            response_format=response_format,
            **priced,
        )
        synced = list(sync.ask_many(asks))
        chat_calls = len(seen.chat_bodies)
        rerun = client_for(
            url, tmp_path / "b", prompts, mode="sync", response_format=response_format
        )
        again = list(rerun.ask_many(asks))
    assert [o.value for o in batched] == [o.value for o in synced] == [o.value for o in again]
    assert batched[0].value.colours == ["sea", "grey"]
    assert len(seen.created) == 1 and len(seen.inputs[0]) == 3, "one job, duplicates sent once"
    line = seen.inputs[0][0]
    assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
    assert seen.created[0]["endpoint"] == "/v1/chat/completions"
    assert seen.created[0]["completion_window"] == "24h"
    # the batch lines carry the bodies the sync path sends, under the keys it caches
    as_json = {json.dumps(b, sort_keys=True) for b in seen.chat_bodies[:chat_calls]}
    assert {json.dumps(x["body"], sort_keys=True) for x in seen.inputs[0]} == as_json
    if response_format == "json_schema":
        assert line["body"]["response_format"]["type"] == "json_schema"
    assert cached(tmp_path / "b") == cached(tmp_path / "s")
    assert {x["custom_id"] for x in seen.inputs[0]} == set(cached(tmp_path / "b"))
    assert len(seen.chat_bodies) == chat_calls, "the sync rerun on the batch cache asked nothing"
    assert rerun.stats()["calls"] == 0 and rerun.stats()["cache_hits"] == 4
    assert counters(batch) == counters(sync)
    stats = batch.stats()
    assert stats["mode"] == "batch"
    assert stats["batches"] == {"submitted": seen.batch_ids, "resumed": []}
    # the same tokens, priced at the batch rates (half the sync prices, none set)
    assert stats["estimated_cost_usd"] == pytest.approx(sync.stats()["estimated_cost_usd"] / 2)
    assert stats["estimated_cost_usd"] > 0
    assert batch.waits == [1.0, 1.0], "polled until the job finished"


def test_a_batch_run_after_a_sync_run_submits_nothing(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    asks = [pick(t) for t in ("sea", "sky")]
    with batch_server(colours) as (url, seen):
        list(client_for(url, tmp_path, prompts, mode="sync").ask_many(asks))
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    assert all(o.ok for o in outcomes)
    assert seen.created == [] and seen.lists == 0
    assert rerun.stats()["cache_hits"] == 2 and rerun.stats()["batches"]["submitted"] == []


def test_reasks_go_as_further_rounds(tmp_path: Path, prompts: PromptLibrary) -> None:
    def reply(body: dict[str, Any], n: int) -> str:
        asked = len(body["messages"]) // 2  # system+user, then assistant+re-ask per round
        if topic_of(body) == "sky" and asked < 3:
            return "not json"
        if topic_of(body) == "moss" and asked < 2:
            return '{"colors": []}'
        return colours(body, n)

    asks = [pick(t) for t in ("sea", "sky", "moss")]
    with batch_server(reply) as (url, seen):
        batch = client_for(url, tmp_path / "b", prompts, reasks=2)
        batched = list(batch.ask_many(asks))
        sync = client_for(url, tmp_path / "s", prompts, mode="sync", reasks=2)
        synced = list(sync.ask_many(asks))
    assert [o.asks for o in batched] == [1, 3, 2] == [o.asks for o in synced]
    assert all(o.ok for o in batched)
    assert [len(lines) for lines in seen.inputs] == [3, 2, 1]
    reask = seen.inputs[1][0]["body"]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "not json"}
    assert "could not be used" in reask[-1]["content"]
    assert counters(batch) == counters(sync)
    assert batch.stats()["reasks"] == 3 and len(batch.stats()["batches"]["submitted"]) == 3


def test_answers_still_invalid_after_the_last_round_fail_like_sync(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    with batch_server(lambda body, n: '{"colors": "red"}') as (url, seen):
        client = client_for(url, tmp_path, prompts, reasks=1)
        [outcome] = list(client.ask_many([pick("sea")]))
    assert not outcome.ok and outcome.asks == 2
    assert outcome.error.startswith("invalid_answer:")
    assert len(seen.created) == 2


def test_an_expired_batch_keeps_its_answers_and_only_the_rest_is_resubmitted(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    asks = [pick(t) for t in ("a", "b", "c", "d", "e")]
    with batch_server(colours, BatchScript(expire_after={1: 2})) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcomes = list(client.ask_many(asks))
    assert all(o.ok for o in outcomes)
    assert [len(lines) for lines in seen.inputs] == [5, 3]
    first = {x["custom_id"] for x in seen.inputs[0][:2]}
    assert first.isdisjoint(x["custom_id"] for x in seen.inputs[1])
    stats = client.stats()
    assert stats["calls"] == 5 and stats["batches"]["submitted"] == seen.batch_ids


def test_an_expired_batch_that_answered_nothing_fails_its_asks(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    with batch_server(colours, BatchScript(expire_after={1: 0})) as (url, seen):
        outcomes = list(client_for(url, tmp_path, prompts).ask_many([pick("a"), pick("b")]))
    expired = f"call_failed: batch {seen.batch_ids[0]} expired without an answer"
    assert [o.error for o in outcomes] == [expired] * 2
    assert len(seen.created) == 1


def test_failed_lines_become_failed_outcomes_and_are_not_cached(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def reply(body: dict[str, Any], n: int) -> str | tuple[int, dict[str, str], str]:
        if topic_of(body) == "long":
            return (400, {}, '{"error": {"message": "context too long"}}')
        return colours(body, n)

    def fail_line(body: dict[str, Any]) -> str | None:
        return "model overloaded" if topic_of(body) == "busy" else None

    asks = [pick(t) for t in ("sea", "long", "busy", "sky")]
    with batch_server(reply, BatchScript(fail_line=fail_line)) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcomes = list(client.ask_many(asks))
        assert [o.ok for o in outcomes] == [True, False, False, True]
        assert outcomes[1].error == "call_failed: HTTP 400: context too long"
        assert outcomes[2].error == "call_failed: scripted_failure: model overloaded"
        assert len(seen.created) == 1, "a failed request is not re-asked in the same run"
        assert len(cached(tmp_path)) == 2
        stats = client.stats()
        assert stats["failure_reasons"] == {"call_failed": 2} and stats["calls"] == 4
        rerun = client_for(url, tmp_path, prompts)
        list(rerun.ask_many(asks))
    assert {topic_of(x["body"]) for x in seen.inputs[1]} == {"long", "busy"}


@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_a_failed_or_cancelled_batch_stops_with_its_id_and_a_rerun_submits_again(
    tmp_path: Path, prompts: PromptLibrary, status: str
) -> None:
    asks = [pick("sea"), pick("sky")]
    with batch_server(colours, BatchScript(final_status={1: status})) as (url, seen):
        with pytest.raises(LLMError, match=rf"batch batch_2 {status}: scripted: batch 1 {status}"):
            list(client_for(url, tmp_path, prompts).ask_many(asks))
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    assert all(o.ok for o in outcomes) and len(seen.created) == 2
    assert rerun.stats()["batches"] == {"submitted": seen.batch_ids[1:], "resumed": []}


def test_a_run_stopped_while_polling_resumes_its_recorded_batch(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def killed(seconds: float) -> None:
        raise KeyboardInterrupt

    asks = [pick(t) for t in ("sea", "sky", "moss")]
    with batch_server(colours, BatchScript(in_progress_polls=2)) as (url, seen):
        first = client_for(url, tmp_path, prompts)
        first._sleep = killed
        with pytest.raises(KeyboardInterrupt):
            list(first.ask_many(asks))
        assert len(seen.created) == 1 and cached(tmp_path) == {}
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    assert all(o.ok for o in outcomes)
    assert len(seen.created) == 1, "the rerun polled the recorded batch, it submitted none"
    assert rerun.stats()["batches"] == {"submitted": [], "resumed": ["batch_2"]}
    assert rerun.stats()["calls"] == 3
    assert BatchLedger(tmp_path / "cache" / "llm.sqlite").state("batch_2") == "completed"


def test_a_run_killed_between_create_and_record_finds_its_batch_by_digest(
    tmp_path: Path, prompts: PromptLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = BatchLedger.record

    def killed(self: BatchLedger, *args: Any) -> None:
        raise KeyboardInterrupt

    asks = [pick(t) for t in ("sea", "sky")]
    with batch_server(colours, BatchScript(in_progress_polls=1)) as (url, seen):
        monkeypatch.setattr(BatchLedger, "record", killed)
        with pytest.raises(KeyboardInterrupt):
            list(client_for(url, tmp_path, prompts).ask_many(asks))
        monkeypatch.setattr(BatchLedger, "record", record)
        assert len(seen.created) == 1
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    assert all(o.ok for o in outcomes)
    assert len(seen.created) == 1 and seen.lists == 2
    assert seen.created[0]["metadata"]["benchsmith_digest"]
    assert rerun.stats()["batches"] == {"submitted": [], "resumed": ["batch_2"]}


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
        "s = settings_for(url, tmp, mode='batch', batch_poll_s=0.02)\n"
        "client = LLMClient.from_settings(s, prompts=PromptLibrary(tmp / 'prompts'))\n"
        "asks = [Ask('t/pick', {'n': 2, 'topic': t}, Colours) for t in ('sea', 'sky')]\n"
        "list(client.ask_many(asks))\n"
    )
    with batch_server(colours, script) as (url, seen):
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
    assert all(o.ok for o in outcomes)
    assert len(seen.created) == 1
    assert rerun.stats()["batches"] == {"submitted": [], "resumed": ["batch_2"]}


def test_a_rerun_mid_reasks_resumes_the_open_round_and_submits_only_the_rest(
    tmp_path: Path, prompts: PromptLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    def reply(body: dict[str, Any], n: int) -> str | tuple[int, dict[str, str], str]:
        if topic_of(body) == "sky" and len(body["messages"]) == 2:
            return "not json"
        if topic_of(body) == "long":
            return (400, {}, '{"error": {"message": "context too long"}}')
        return colours(body, n)

    polls = [0]

    def killed_in_round_two(seconds: float) -> None:
        polls[0] += 1
        if polls[0] == 2:
            raise KeyboardInterrupt

    asks = [pick(t) for t in ("sea", "sky", "long")]
    with batch_server(reply, BatchScript(in_progress_polls=1)) as (url, seen):
        first = client_for(url, tmp_path, prompts)
        first._sleep = killed_in_round_two
        with pytest.raises(KeyboardInterrupt):
            list(first.ask_many(asks))
        assert [len(lines) for lines in seen.inputs] == [3, 1]
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    assert [o.ok for o in outcomes] == [True, True, False]
    # the re-ask job was resumed; only the requests whose answers were unusable (sky's first,
    # rejected as malformed, never served from the cache) or failed (long) went again
    assert [len(lines) for lines in seen.inputs] == [3, 1, 2]
    again = sorted(
        (topic_of(line["body"]), len(line["body"]["messages"])) for line in seen.inputs[2]
    )
    assert again == [("long", 2), ("sky", 2)]
    assert rerun.stats()["batches"]["resumed"] == [seen.batch_ids[1]]


def test_waiting_past_the_limit_stops_and_a_rerun_resumes(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    script = BatchScript(in_progress_polls=5)
    with batch_server(colours, script) as (url, seen):
        client = client_for(url, tmp_path, prompts, batch_max_wait_s=2.0)
        with pytest.raises(LLMError, match=r"batch_2 \(in_progress\); they are recorded"):
            list(client.ask_many([pick("sea")]))
        outcomes = list(client_for(url, tmp_path, prompts).ask_many([pick("sea")]))
    assert outcomes[0].ok and len(seen.created) == 1


def test_large_rounds_are_split_into_several_jobs(tmp_path: Path, prompts: PromptLibrary) -> None:
    asks = [pick(t) for t in "abcde"]
    with batch_server(colours) as (url, seen):
        client = client_for(url, tmp_path, prompts, batch_max_requests=2)
        outcomes = list(client.ask_many(asks))
    assert [o.value.colours[0] for o in outcomes] == list("abcde")
    assert [len(lines) for lines in seen.inputs] == [2, 2, 1]
    digests = {c["metadata"]["benchsmith_digest"] for c in seen.created}
    assert len(digests) == 3


def test_a_refused_schema_is_sent_again_as_json_mode(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def reply(body: dict[str, Any], n: int) -> str | tuple[int, dict[str, str], str]:
        if body.get("response_format", {}).get("type") == "json_schema":
            message = "Unsupported parameter: 'response_format.json_schema'"
            return (400, {}, json.dumps({"error": {"message": message}}))
        return colours(body, n)

    with batch_server(reply) as (url, seen):
        client = client_for(url, tmp_path, prompts, response_format="json_schema")
        outcomes = list(client.ask_many([pick("sea"), pick("sky")]))
    assert all(o.ok for o in outcomes)
    assert [x["body"]["response_format"]["type"] for x in seen.inputs[1]] == ["json_object"] * 2
    assert "json_schema refused" in client.stats()["response_format_fallback"]


def test_the_template_backend_ignores_batch_mode(tmp_path: Path, prompts: PromptLibrary) -> None:
    settings = settings_for("http://127.0.0.1:9/v1", tmp_path, backend="template", mode="batch")
    backend = TemplateBackend({"t/pick": lambda v: json.dumps({"colours": [v["topic"]]})})
    client = LLMClient(settings, backend, prompts=prompts)
    outcomes = list(client.ask_many([pick("sea"), pick("sky")]))
    assert [o.value.colours for o in outcomes] == [["sea"], ["sky"]]
    assert client.stats()["batches"] == {"submitted": [], "resumed": []}


def test_the_key_reaches_the_server_but_no_cache_state_stats_or_log(
    tmp_path: Path,
    prompts: PromptLibrary,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    canary = "sk-canary-batch-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    caplog.set_level("DEBUG")

    def reply(body: dict[str, Any], n: int) -> str | tuple[int, dict[str, str], str]:
        if topic_of(body) == "sky":
            return (401, {}, json.dumps({"error": {"message": f"bad key {canary}"}}))
        return colours(body, n)

    with batch_server(reply, BatchScript(expire_after={1: 2})) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcomes = list(client.ask_many([pick(t) for t in ("sea", "sky", "moss")]))
        client.cache.close()
    assert [o.ok for o in outcomes] == [True, False, True]
    assert seen.headers and all(h["authorization"] == f"Bearer {canary}" for h in seen.headers)
    files = list((tmp_path / "cache").iterdir())
    assert any(f.name == "llm.sqlite" for f in files)
    for path in files:
        assert canary.encode() not in path.read_bytes(), path.name
    with sqlite3.connect(tmp_path / "cache" / "llm.sqlite") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert {"batch_jobs", "batch_job_keys"} <= tables
    assert canary not in json.dumps(client.stats())
    assert canary not in caplog.text


def refuse_first(answers: dict[str, int]) -> tuple[Any, list[str]]:
    """A :class:`BatchScript` ``refuse`` hook answering the first request to each ``"METHOD
    /path"`` (a prefix) of ``answers`` with its status, the key echoed; and what it refused."""
    refused: list[str] = []

    def refuse(method: str, path: str, headers: dict[str, str]) -> Any:
        for what, status in answers.items():
            verb, prefix = what.split()
            if (method, what not in refused) == (verb, True) and path.startswith(prefix):
                refused.append(what)
                return echoed(status, headers["authorization"])
        return None

    return refuse, refused


@pytest.mark.parametrize("key", [SK, ARBITRARY], ids=["sk-shaped", "arbitrary"])
def test_a_key_the_batch_api_echoes_reaches_no_outcome_cache_ledger_stats_log_or_console(
    tmp_path: Path,
    prompts: PromptLibrary,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    key: str,
) -> None:
    variable = key_variable()  # only llm.api_key_env makes its value a secret
    monkeypatch.setenv(variable, key)
    caplog.set_level("DEBUG")
    echo = Echo(400, 401, 429, 500)  # the lines after the first, in turn

    def reply(body: dict[str, Any], n: int) -> str | tuple[int, dict[str, str], str]:
        return colours(body, n) if topic_of(body) == "sea" else echo(body, n)

    def fail_line(body: dict[str, Any]) -> str | None:
        return f"scripted refusal of {key}" if topic_of(body) == "kelp" else None

    busy = {"POST /v1/files": 429, "GET /v1/batches": 500}  # once each: the SDK retries them
    refuse, refused = refuse_first(busy)

    topics = ("sea", "sky", "moss", "fern", "reed", "kelp")
    errors = []
    with redacting_logs():
        with batch_server(reply, BatchScript(fail_line=fail_line, refuse=refuse)) as (url, seen):
            echo.log = seen
            client = client_for(url, tmp_path / "a", prompts, api_key_env=variable)
            outcomes = list(client.ask_many([pick(t) for t in topics]))
            stats = json.dumps(client.stats())
            client.cache.close()
        for status, endpoint in ((400, "POST /v1/batches"), (401, "POST /v1/files")):
            script = BatchScript(refuse=refuse_first({endpoint: status})[0])
            with batch_server(colours, script) as (url, _), pytest.raises(LLMError) as stopped:
                client = client_for(url, tmp_path / str(status), prompts, api_key_env=variable)
                list(client.ask_many([pick("sea")]))
            errors.append(str(stopped.value))
    assert {h["authorization"] for h in seen.headers} == {f"Bearer {key}"}  # it was sent
    assert sorted(refused) == sorted(busy)
    assert [o.ok for o in outcomes] == [True, False, False, False, False, False]
    reasons = [o.error for o in outcomes[1:]]
    assert sorted(r.split(":", 2)[1].strip() for r in reasons[:4]) == [
        "HTTP 400", "HTTP 401", "HTTP 429", "HTTP 500",
    ]  # fmt: skip
    assert "REDACTED is not a key" in " ".join(reasons)
    assert reasons[4] == "call_failed: scripted_failure: scripted refusal of REDACTED"
    assert "creating a batch failed" in errors[0] and "REDACTED" in errors[0]
    assert "refused the key for uploading" in errors[1] and variable in errors[1]
    out, err = capfd.readouterr()
    texts = [caplog.text, *(r.getMessage() for r in caplog.records), out, err, stats, *errors]
    texts += [o.error for o in outcomes]
    assert leaks([key], folders=[tmp_path], texts=texts) == []


def test_an_output_file_naming_requests_the_job_was_never_given_stops_the_stage(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    stray = [f"stray-{i}" for i in range(4)]
    asks = [pick(t) for t in ("sea", "sky")]
    with batch_server(colours, BatchScript(stray_ids={1: stray})) as (url, seen):
        with pytest.raises(LLMError) as stopped:
            list(client_for(url, tmp_path, prompts).ask_many(asks))
        assert len(cached(tmp_path)) == 2, "the job's own answers are kept"
        rerun = client_for(url, tmp_path, prompts)
        outcomes = list(rerun.ask_many(asks))
    message = str(stopped.value)
    assert f"batch {seen.batch_ids[0]} answered 4 requests it was never given" in message
    assert "(custom_id stray-0, stray-1, stray-2 and 1 more)" in message
    assert all(o.ok for o in outcomes) and len(seen.created) == 1
    assert BatchLedger(tmp_path / "cache" / "llm.sqlite").state(seen.batch_ids[0]) == "completed"
