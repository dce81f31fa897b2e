"""Benchmark the LLM layer: calls/s as concurrency grows, against the bare openai SDK, and the
cost of a cache hit.

A local OpenAI-compatible server on 127.0.0.1 answers every chat completion after injected
latency (200 ms by default). For each concurrency level, the same number of distinct questions
goes through our client (render, cache miss, call, parse, validate, store) and through bare
``openai`` SDK calls in a thread pool of the same size (the reference). A second pass of our
client over the same questions is served from the SQLite cache. Run:

    python bench/llm.py --asks 200 --levels 1 2 4 8 16 32
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
from pydantic import BaseModel

from pipelines.llm import Ask, LLMClient, LLMSettings, PromptLibrary, ResponseCache
from pipelines.llm.backends.openai_api import OpenAIBackend
from tests.support.openai_server import openai_server

PROMPT = (
    "[system]\nAnswer with JSON.\n[user]\n"
    "Give three facts about item {{ i }} at level {{ level }}.\n"
)
ANSWER = json.dumps({"facts": ["one fact", "another fact", "a third fact"]})


class Facts(BaseModel):
    facts: list[str]


def ours(url: str, root: Path, level: int, asks: int) -> tuple[float, float]:
    """Asks/s through our client on a cold cache, then on the warm cache."""
    settings = LLMSettings(
        backend="openai",
        base_url=url,
        model="bench",
        concurrency=level,
        cache=root / f"c{level}.sqlite",
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        openai_server(lambda body, n: ANSWER, args.latency) as (url, _),
    ):
        root = Path(tmp)
        (root / "prompts").mkdir()
        (root / "prompts" / "bench.j2").write_text(PROMPT)
        (root / "prompts" / "reask.j2").write_text("[user]\n{{ error }}\n")
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cores, "
            f"python {platform.python_version()}; {args.asks} asks per level, "
            f"{args.latency * 1000:.0f} ms latency per call"
        )
        print(
            "| concurrency | ours asks/s | bare SDK calls/s | ours / bare "
            "| cached asks/s | cached ms/ask |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        for level in args.levels:
            cold, warm = ours(url, root, level, args.asks)
            reference = bare(url, level, args.asks)
            print(
                f"| {level} | {cold:,.1f} | {reference:,.1f} | {cold / reference:.2f} | "
                f"{warm:,.0f} | {1000 / warm:.2f} |"
            )


if __name__ == "__main__":
    main()
