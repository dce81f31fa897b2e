"""The SQLite response cache: persistent, and safe with several processes writing at once."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from pipelines.llm import ChatResponse, ResponseCache


def test_answers_survive_a_new_instance(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    cache.put("k1", ChatResponse("hello", 3, 1), prompt="p", backend="b", model="m")
    cache.close()
    again = ResponseCache(path)
    hit = again.get("k1")
    assert hit == ChatResponse("hello", 3, 1, cached=True)
    assert again.get("k2") is None


def test_first_answer_for_a_key_is_kept(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", ChatResponse("first"), prompt="p", backend="b", model="m")
    cache.put("k", ChatResponse("second"), prompt="p", backend="b", model="m")
    assert cache.get("k").text == "first"
    assert len(cache) == 1


def _writer(path: str, worker: int, n: int) -> None:
    cache = ResponseCache(Path(path))
    for i in range(n):
        # half the keys are shared between workers, half are their own
        key = f"shared-{i}" if i % 2 else f"w{worker}-{i}"
        cache.put(key, ChatResponse(f"{worker}:{i}"), prompt="p", backend="b", model="m")
        assert cache.get(key) is not None


def test_processes_write_concurrently_without_losing_answers(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    workers, n = 4, 60
    context = multiprocessing.get_context("spawn")
    procs = [context.Process(target=_writer, args=(str(path), w, n)) for w in range(workers)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [p.exitcode for p in procs] == [0] * workers
    own = workers * (n // 2)
    shared = n // 2
    assert len(ResponseCache(path)) == own + shared
