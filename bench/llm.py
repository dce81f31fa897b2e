"""Benchmark the LLM layer: calls/s as concurrency grows, against the bare openai SDK, and the
cost of a cache hit.

A local OpenAI-compatible server on 127.0.0.1 answers every chat completion after injected
latency (200 ms by default). For each concurrency level, the same number of distinct questions
goes through our client (render, cache miss, call, parse, validate, store) and through bare
``openai`` SDK calls in a thread pool of the same size (the reference). A second pass of our
client over the same questions is served from the SQLite cache.

The batch part (``llm.mode: batch``) sends cold questions through the local Files/Batches
stand-in, running in its own process, and reports this process's CPU time per request (request
bodies, the JSONL file, polling, parsing the output, cache writes, the rounds and the final pass)
against the sync path's on the same stand-in.

The rate-limit part sends cold questions to a server that enforces a token bucket (N requests
per second, one second's worth of burst; above it 429 with Retry-After) through a fixed pool at
the ceiling and through adaptive concurrency, and reports throughput as a share of what the
server allows in that time (burst + N x seconds) and the 429s, for three kinds of server: 429
with ``retry-after-ms``, with whole-second ``Retry-After`` only, and with OpenAI's
``x-ratelimit-*`` headers on every answer. It also times ``with_raw_response`` (how the adaptive
client reads headers) against a plain ``create``.

The constrained part loads SmolLM2-135M-Instruct in this process (the test server's engine) and
times greedy generation with and without the llguidance mask of a JSON schema. Run:

    python bench/llm.py --asks 200 --levels 1 2 4 8 16 32 --batch-asks 2000
    python bench/llm.py --constrained-only --constrained-tokens 256
    python bench/llm.py --rate-limit-only --rate 50 --rate-asks 600 --ceiling 32
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
from pydantic import BaseModel

from pipelines.llm import Ask, LLMClient, LLMSettings, PromptLibrary, ResponseCache
from pipelines.llm.backends.openai_api import OpenAIBackend
from pipelines.llm.pacing import Pacers
from tests.support.openai_server import openai_server
from tests.support.rate_limited_server import rate_limited_server

PROMPT = (
    "[system]\nAnswer with JSON.\n[user]\n"
    "Give three facts about item {{ i }} at level {{ level }}.\n"
)
ANSWER = json.dumps({"facts": ["one fact", "another fact", "a third fact"]})


class Facts(BaseModel):
    facts: list[str]


def ours(url: str, root: Path, level: int, asks: int, run: int = 0) -> tuple[float, float]:
    """Asks/s through our client (adaptive concurrency on, the default) on a cold cache, then
    on the warm cache."""
    settings = LLMSettings(
        backend="openai",
        base_url=url,
        model="bench",
        concurrency=level,
        cache=root / f"c{level}-{run}.sqlite",
    )
    prompts = PromptLibrary(root / "prompts")
    questions = [Ask("bench", {"i": i, "level": level}, Facts) for i in range(asks)]
    rates = []
    for _ in range(2):
        client = LLMClient(
            settings, OpenAIBackend(settings), cache=ResponseCache(settings.cache), prompts=prompts
        )
        start = time.perf_counter()
        outcomes = list(client.ask_many(questions))
        rates.append(asks / (time.perf_counter() - start))
        assert all(o.ok for o in outcomes)
    return rates[0], rates[1]


def bare(url: str, level: int, asks: int) -> float:
    """Calls/s through the openai SDK alone, in a thread pool of ``level`` workers."""
    client = openai.OpenAI(base_url=url, api_key="unset", max_retries=0)

    def call(i: int) -> str:
        reply = client.chat.completions.create(
            model="bench",
            messages=[
                {"role": "user", "content": f"Give three facts about item {i} at level {level}."}
            ],
            max_tokens=1024,
            temperature=0,
            seed=0,
        )
        return reply.choices[0].message.content or ""

    start = time.perf_counter()
    with ThreadPoolExecutor(level) as pool:
        results = list(pool.map(call, range(asks)))
    assert all(results)
    return asks / (time.perf_counter() - start)


# --- adaptive concurrency against a rate-limited server -------------------------------------

SERVERS = {
    "429 + retry-after-ms": {"precise": True, "headers": False},
    "429 + whole-second Retry-After": {"precise": False, "headers": False},
    "429 + retry-after-ms + x-ratelimit headers": {"precise": True, "headers": True},
}


def rate_limited(root: Path, rate: float, asks: int, ceiling: int, latency: float) -> None:
    """Fixed pool at ``ceiling`` against adaptive concurrency, on fresh token-bucket servers."""
    print(
        f"\nrate limit: a token bucket of {rate:.0f} requests/s (burst {rate:.0f}), "
        f"{latency * 1000:.0f} ms a call (about {rate * latency:.0f} calls in flight fit), "
        f"{asks} cold asks, ceiling {ceiling}; {os.cpu_count()} cores"
    )
    print("| server | concurrency | asks/s | share of the limit | 429s | limit final (min-max) |")
    print("|---|---|---:|---:|---:|---|")
    for name, kind in SERVERS.items():
        for adaptive in (False, True):
            with rate_limited_server(ANSWER, rate, latency_s=latency, **kind) as (url, bucket, _):
                settings = LLMSettings(
                    backend="openai",
                    base_url=url,
                    model="bench",
                    concurrency=ceiling,
                    retries=100,
                    adaptive_concurrency=adaptive,
                    cache=root / f"rate-{name}-{adaptive}.sqlite",
                )
                client = LLMClient(
                    settings,
                    OpenAIBackend(settings),
                    cache=ResponseCache(settings.cache),
                    prompts=PromptLibrary(root / "prompts"),
                    pacers=Pacers(),
                )
                questions = [Ask("bench", {"i": i, "level": -1}, Facts) for i in range(asks)]
                start = time.perf_counter()
                outcomes = list(client.ask_many(questions))
                wall = time.perf_counter() - start
            assert all(o.ok for o in outcomes) and bucket.served == asks
            block = client.stats()["concurrency"]
            assert block["rate_limited"] == bucket.refused
            share = asks / (bucket.burst + rate * wall)
            pool = f"adaptive (≤ {ceiling})" if adaptive else f"fixed {ceiling}"
            limit = f"{block['final']} ({block['min']}-{block['max']})" if adaptive else "-"
            print(
                f"| {name} | {pool} | {asks / wall:.1f} | {share:.2f} | {bucket.refused:,} "
                f"| {limit} |"
            )


def raw_response_cost(url: str, calls: int = 400, repeats: int = 3) -> None:
    """CPU per call of ``create`` against ``with_raw_response.create`` + headers + ``parse``
    (one thread, no latency; best of ``repeats``)."""
    client = openai.OpenAI(base_url=url, api_key="unset", max_retries=0)
    body = {"model": "bench", "messages": [{"role": "user", "content": "facts"}]}
    completions = client.chat.completions

    def plain() -> Any:
        return completions.create(**body)

    def raw() -> Any:
        reply = completions.with_raw_response.create(**body)
        dict(reply.headers)
        return reply.parse()

    best: dict[str, float] = {}
    for _ in range(repeats):
        for name, call in (("create", plain), ("with_raw_response", raw)):
            cpu = time.process_time()
            for _ in range(calls):
                assert call().choices[0].message.content
            spent = (time.process_time() - cpu) / calls
            best[name] = min(best.get(name, spent), spent)
    extra = best["with_raw_response"] - best["create"]
    print(
        f"\nreading headers: CPU per call (client and in-process server), {calls} calls, "
        f"best of {repeats}: create {1e6 * best['create']:,.0f} µs, with_raw_response "
        f"{1e6 * best['with_raw_response']:,.0f} µs ({1e6 * extra:+,.0f} µs, "
        f"{extra / best['create']:+.1%})"
    )


# --- llm.mode: batch: the client-side cost of a request sent through the Batch API -----------

BATCH_STAND_IN = """
import sys
from tests.support.batch_server import batch_server
with batch_server(lambda body, n: sys.argv[1]) as (url, _):
    print(url, flush=True)
    sys.stdin.read()
"""


@contextmanager
def batch_stand_in() -> Iterator[str]:
    """The local Files/Batches stand-in (with chat completions) in a process of its own, so
    this process's CPU time is the client's alone; yields its base URL."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", BATCH_STAND_IN, ANSWER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


class Timed:
    """CPU seconds spent in wrapped functions, by label."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def wrap(self, owner: Any, name: str, label: str) -> Iterator[None]:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent = time.process_time() - start
                self.seconds[label] = self.seconds.get(label, 0.0) + spent

        setattr(owner, name, timed)
        try:
            yield
        finally:
            setattr(owner, name, original)


def client_cost(url: str, root: Path, mode: str, asks: int, cache: str = "") -> tuple[float, float]:
    """Wall seconds and this process's CPU seconds for ``asks`` cold questions in ``mode``."""
    settings = LLMSettings(
        backend="openai",
        base_url=url,
        model="bench",
        mode=mode,
        concurrency=8,
        cache=root / f"{cache or mode}.sqlite",
    )
    client = LLMClient(
        settings,
        OpenAIBackend(settings),
        cache=ResponseCache(settings.cache),
        prompts=PromptLibrary(root / "prompts"),
        sleep=lambda seconds: None,
    )
    questions = [Ask("bench", {"i": i, "level": 0}, Facts) for i in range(asks)]
    wall, cpu = time.perf_counter(), time.process_time()
    outcomes = list(client.ask_many(questions))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert all(o.ok for o in outcomes) and client.stats()["calls"] == asks
    return wall, cpu


def batch_overhead(asks: int, repeats: int = 3) -> None:
    """Client CPU per request, sync against batch (best of ``repeats`` runs each), and where
    the batch path spends it."""
    import pipelines.llm.batch as batch
    import pipelines.llm.batch_api as batch_api

    runs: dict[str, list[tuple[float, float, dict[str, float]]]] = {"sync": [], "batch": []}
    with tempfile.TemporaryDirectory() as tmp, batch_stand_in() as url:
        root = Path(tmp)
        (root / "prompts").mkdir()
        (root / "prompts" / "bench.j2").write_text(PROMPT)
        (root / "prompts" / "reask.j2").write_text("[user]\n{{ error }}\n")
        client_cost(url, root, "sync", 20, "warm-up")  # imports, first connections
        for run in range(repeats):
            for mode in runs:
                timed = Timed()
                with (
                    timed.wrap(OpenAIBackend, "batch_body", "bodies"),
                    timed.wrap(batch_api, "jsonl_line", "lines"),
                    timed.wrap(batch_api, "parse_lines", "parse"),
                    timed.wrap(ResponseCache, "put", "cache"),
                    timed.wrap(batch._BatchRun, "_collect", "collect"),
                ):
                    wall, cpu = client_cost(url, root, mode, asks, f"{mode}{run}")
                runs[mode].append((cpu, wall, timed.seconds))
    (sync_cpu, sync_wall, _), (batch_cpu, batch_wall, seconds) = (
        min(runs["sync"]),
        min(runs["batch"]),
    )
    print(
        f"\nllm.mode: batch, client side: {asks} cold asks, one answer each, the stand-in in "
        f"its own process; best of {repeats}; {os.cpu_count()} cores"
    )
    print("| path | wall s | client CPU ms/request | CPU vs sync |")
    print("|---|---:|---:|---:|")
    for name, wall, cpu in (
        ("sync, 8 calls in flight", sync_wall, sync_cpu),
        ("batch, one job", batch_wall, batch_cpu),
    ):
        print(f"| {name} | {wall:.2f} | {1000 * cpu / asks:.3f} | {cpu / sync_cpu:.2f} |")
    parts = {
        "request bodies and JSONL lines": seconds.get("bodies", 0) + seconds.get("lines", 0),
        "parsing the output file": seconds.get("parse", 0),
        "cache writes": seconds.get("cache", 0),
        "collecting the round (ask logic against the cache)": seconds.get("collect", 0),
    }
    parts["final pass (ask logic, cache reads), HTTP, polls, rest"] = batch_cpu - sum(
        parts.values()
    )
    print("\n| batch path, client CPU | µs/request | share |")
    print("|---|---:|---:|")
    for name, spent in parts.items():
        print(f"| {name} | {1e6 * spent / asks:,.0f} | {spent / batch_cpu:.0%} |")


# --- constrained decoding: what the llguidance mask costs per generated token -----------------

CONSTRAINED_PROMPT = "List the numbers from one to five hundred in words, as a JSON object."
CONSTRAINED_SCHEMA = {
    "type": "object",
    "properties": {"numbers": {"type": "array", "items": {"type": "string", "maxLength": 40}}},
    "required": ["numbers"],
    "additionalProperties": False,
}
"""Open-ended: the answer runs until ``max_tokens`` wraps it up."""


def constrained_overhead(tokens: int, repeats: int = 3) -> None:
    """SmolLM2-135M in this process: ms per generated token with and without the llguidance
    mask of a JSON schema (best of ``repeats``), and the mask's own share. The plain run is
    held to ``tokens`` tokens; the schema's open list runs until the budget wraps it up."""
    import torch

    from tests.support.constrained_server import Engine, SchemaMask
    from tests.support.smollm import ensure_model

    engine = Engine(ensure_model(Path(__file__).resolve().parents[1] / ".cache"))
    prompt = engine.encode([{"role": "user", "content": CONSTRAINED_PROMPT}])
    grammar = engine.grammar(CONSTRAINED_SCHEMA)
    engine.generate(prompt, 8)  # warm-up
    timed = Timed()
    best: dict[str, tuple[float, int, float]] = {}
    for _ in range(repeats):
        for name, g in (("plain", None), ("json_schema", grammar)):
            timed.seconds.clear()
            with timed.wrap(SchemaMask, "__call__", "mask"):
                result = engine.generate(prompt, tokens, grammar=g, min_tokens=tokens)
            ms = 1000 * result.seconds / result.completion_tokens
            mask_ms = 1000 * timed.seconds.get("mask", 0.0) / result.completion_tokens
            if name not in best or ms < best[name][0]:
                best[name] = (ms, result.completion_tokens, mask_ms)
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.processor(),
    )  # fmt: skip
    print(
        f"\nconstrained decoding: SmolLM2-135M-Instruct, float32, greedy, up to {tokens} tokens, "
        f"best of {repeats}; {os.cpu_count()} cores ({cpu}), {torch.get_num_threads()} torch "
        "threads"
    )
    print("| decoding | tokens | ms/token | mask ms/token | vs plain |")
    print("|---|---:|---:|---:|---:|")
    for name, (ms, count, mask_ms) in best.items():
        ratio = ms / best["plain"][0]
        print(f"| {name} | {count} | {ms:.1f} | {mask_ms:.2f} | {ratio:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--repeats", type=int, default=1, help="best of this many runs each")
    parser.add_argument("--batch-asks", type=int, default=2000, help="0: skip the batch part")
    parser.add_argument("--batch-only", action="store_true", help="only the batch part")
    parser.add_argument(
        "--constrained-tokens", type=int, default=0, help="constrained decoding part; 0: skip"
    )
    parser.add_argument("--constrained-only", action="store_true", help="only that part")
    parser.add_argument("--rate", type=float, default=50.0, help="rate limit, requests/s")
    parser.add_argument("--rate-asks", type=int, default=600, help="0: skip the rate-limit part")
    parser.add_argument("--ceiling", type=int, default=32, help="llm.concurrency there")
    parser.add_argument("--rate-limit-only", action="store_true", help="only that part")
    args = parser.parse_args()
    if args.constrained_tokens:
        constrained_overhead(args.constrained_tokens)
        if args.constrained_only:
            return
    if args.batch_asks:
        batch_overhead(args.batch_asks)
        if args.batch_only:
            return
    with (
        tempfile.TemporaryDirectory() as tmp,
        openai_server(lambda body, n: ANSWER, args.latency) as (url, _),
    ):
        root = Path(tmp)
        (root / "prompts").mkdir()
        (root / "prompts" / "bench.j2").write_text(PROMPT)
        (root / "prompts" / "reask.j2").write_text("[user]\n{{ error }}\n")
        if args.rate_asks:
            rate_limited(root, args.rate, args.rate_asks, args.ceiling, args.latency)
            if args.rate_limit_only:
                return
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cores, "
            f"python {platform.python_version()}; {args.asks} asks per level, "
            f"{args.latency * 1000:.0f} ms latency per call, best of {args.repeats}"
        )
        print(
            "| concurrency | ours asks/s | bare SDK calls/s | ours / bare "
            "| cached asks/s | cached ms/ask |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        for level in args.levels:
            cold = warm = reference = 0.0
            for run in range(args.repeats):  # best of each, taken in turn
                cold_run, warm_run = ours(url, root, level, args.asks, run)
                cold, warm = max(cold, cold_run), max(warm, warm_run)
                reference = max(reference, bare(url, level, args.asks))
            print(
                f"| {level} | {cold:,.1f} | {reference:,.1f} | {cold / reference:.2f} | "
                f"{warm:,.0f} | {1000 / warm:.2f} |"
            )
    with openai_server(lambda body, n: ANSWER) as (url, _):
        raw_response_cost(url)


if __name__ == "__main__":
    main()
