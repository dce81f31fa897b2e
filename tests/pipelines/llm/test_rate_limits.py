"""The client against servers that enforce a rate limit: adaptive concurrency end to end."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pipelines.display import print_report
from pipelines.llm import Ask, LLMClient, PromptLibrary, ResponseCache
from pipelines.llm.backends.openai_api import OpenAIBackend
from pipelines.llm.pacing import Pacers
from tests.pipelines.llm.conftest import client_for, settings_for
from tests.support.openai_server import openai_server
from tests.support.rate_limited_server import rate_limited_server

GOOD = '{"colours": ["red", "green", "blue"]}'


class Colours(BaseModel):
    colours: list[str]


def asks(n: int) -> list[Ask[Colours]]:
    return [Ask("t/pick", {"n": 3, "topic": f"topic {i}"}, Colours) for i in range(n)]


def real_client(url: str, root: Path, prompts: PromptLibrary, **overrides: Any) -> LLMClient:
    """A client that really sleeps, with a pacer registry of its own."""
    settings = settings_for(url, root, **overrides)
    return LLMClient(
        settings,
        OpenAIBackend(settings),
        cache=ResponseCache(settings.cache),
        prompts=prompts,
        pacers=Pacers(),
        sleep=time.sleep,
    )


def test_adaptive_client_finishes_with_fewer_429s_than_a_fixed_pool_at_the_ceiling(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    # 40 requests/s, 0.1 s a call: about 4 calls in flight fit; the ceiling is 16
    refused, limits = {}, {}
    for adaptive in (False, True):
        with rate_limited_server(GOOD, rate=40, latency_s=0.1) as (url, bucket, seen):
            client = real_client(
                url, tmp_path / str(adaptive), prompts,
                concurrency=16, retries=100, adaptive_concurrency=adaptive,
            )  # fmt: skip
            outcomes = list(client.ask_many(asks(100)))
        assert all(o.ok for o in outcomes)
        block = client.stats()["concurrency"]
        assert block["adaptive"] is adaptive
        # every 429 the server sent was counted by the client, and every ask was served once
        assert block["rate_limited"] == bucket.refused and bucket.served == 100
        assert seen.count == bucket.served + bucket.refused
        refused[adaptive], limits[adaptive] = bucket.refused, block
    assert refused[True] < refused[False]
    adaptive_block = limits[True]
    assert adaptive_block["ceiling"] == 16 and adaptive_block["series"][0] == [0.0, 16]
    assert adaptive_block["min"] < 16 and adaptive_block["max"] == 16
    assert [n for _, n in adaptive_block["series"]][-1] == adaptive_block["final"]


def test_a_retry_after_holds_the_next_ask_too(
    tmp_path: Path, prompts: PromptLibrary, capsys: pytest.CaptureFixture[str]
) -> None:
    def reply(body: dict, n: int):
        return (
            (429, {"Retry-After": "7"}, '{"error": {"message": "slow down"}}') if n == 1 else GOOD
        )

    with openai_server(reply) as (url, seen):
        client = client_for(url, tmp_path, prompts, concurrency=2)
        first, second = client.ask(asks(2)[0]), client.ask(asks(2)[1])
    assert first.ok and second.ok and seen.count == 3
    # the refused ask waited its Retry-After; the next one, sent right after (the waits are
    # recorded, not slept), waited for what is left of it: no new call before it
    assert client.waits[0] == 7.0 and 6.0 < client.waits[1] <= 7.0
    block = client.stats()["concurrency"]
    assert block["rate_limited"] == 1 and block["final"] == 1 and block["min"] == 1
    # the stage's summary shows them
    (tmp_path / "data" / "summhay").mkdir(parents=True)
    stats = {"stage": "summhay", "counts": {}, "llm": client.stats()}
    (tmp_path / "data" / "summhay" / "stats.json").write_text(json.dumps(stats))
    assert print_report(tmp_path / "data")
    shown = capsys.readouterr().out
    assert "rate limited (HTTP 429)" in shown and "1 (1-2 of 2)" in shown


def test_a_429_without_retry_after_cuts_the_limit_but_holds_only_its_retry(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    refusal = (429, {}, '{"error": {"message": "slow down"}}')
    with openai_server(lambda body, n: refusal if n == 1 else GOOD) as (url, seen):
        client = client_for(url, tmp_path, prompts, backoff_s=5.0)
        assert all(client.ask(a).ok for a in asks(2)) and seen.count == 3
    assert len(client.waits) == 1 and 2.5 <= client.waits[0] < 5.0  # its own backoff only
    assert client.stats()["concurrency"]["final"] == 3


def test_retry_after_ms_is_read_before_retry_after(tmp_path: Path, prompts: PromptLibrary) -> None:
    refusal = (429, {"Retry-After": "1", "retry-after-ms": "250"}, '{"error": {}}')
    with openai_server(lambda body, n: refusal if n == 1 else GOOD) as (url, _):
        client = client_for(url, tmp_path, prompts)
        assert client.ask(asks(1)[0]).ok
    assert client.waits == [0.25]


def test_a_response_with_no_request_left_pauses_new_calls(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    left = iter(["0", "5"])

    def gate(body: dict) -> dict[str, str]:
        return {"x-ratelimit-remaining-requests": next(left), "x-ratelimit-reset-requests": "6s"}

    with openai_server(lambda body, n: GOOD, gate=gate) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcomes = [client.ask(a) for a in asks(2)]
    assert all(o.ok for o in outcomes) and seen.count == 2
    # no request left after the first call: the second waited for the reset (no limit sent)
    assert len(client.waits) == 1 and 5.0 < client.waits[0] <= 6.0
    assert client.stats()["concurrency"]["rate_limited"] == 0


def test_fixed_concurrency_reads_no_headers_and_waits_alone(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def gate(body: dict) -> dict[str, str]:
        return {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6s"}

    with openai_server(lambda body, n: GOOD, gate=gate) as (url, _):
        client = client_for(url, tmp_path, prompts, adaptive_concurrency=False)
        outcomes = [client.ask(a) for a in asks(2)]
    assert all(o.ok for o in outcomes)
    assert client.pacer is None and client.backend.on_headers is None and client.waits == []
    assert client.stats()["concurrency"] == {"adaptive": False, "ceiling": 4, "rate_limited": 0}
