"""What the response cache serves: only finished answers that passed their check, keyed by the
versions of the answer model and the check (a changed one asks again), and a failure ledger of
every ask given up."""

from __future__ import annotations

import functools
import importlib.util
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, create_model, field_validator
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.failure_ledger import FAILURES, read_failures, top_reasons, write_failures
from pipelines.llm import Ask, PromptLibrary
from pipelines.llm.versions import answer_version
from tests.pipelines.llm.conftest import client_for
from tests.support.openai_server import Finished, openai_server

GOOD = '{"colours": ["red", "blue"]}'


class Colours(BaseModel):
    colours: list[str]


def pick(topic: str, check: Any = None) -> Ask[Colours]:
    return Ask("t/pick", {"n": 2, "topic": topic}, Colours, check=check)


def topic_of(body: dict[str, Any]) -> str:
    return body["messages"][1]["content"].rsplit("Topic: ", 1)[1].rstrip(".")


def rows(cache: Path) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(cache) as db:
        return db.execute("SELECT text, finish_reason, rejected FROM responses").fetchall()


def test_an_answer_cut_at_max_tokens_is_re_asked_and_never_served(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def reply(body: dict[str, Any], n: int) -> str | Finished:
        # the first answer is complete JSON, but the model had not finished: it is not used
        return Finished(GOOD, "length") if len(body["messages"]) == 2 else GOOD

    with openai_server(reply) as (url, seen):
        client = client_for(url, tmp_path, prompts)
        outcome = client.ask(pick("sea"))
        assert outcome.ok and outcome.asks == 2
        assert "cut at max_tokens" in seen.bodies[1]["messages"][-1]["content"]
        rerun = client_for(url, tmp_path, prompts)
        assert rerun.ask(pick("sea")).ok
    stats = client.stats()
    assert (stats["unfinished"], stats["parsed"], stats["malformed"]) == (1, 1, 0)
    # kept (it was paid for) with its finish reason; the rerun asked it again, not served it
    assert sorted(r[1] for r in rows(tmp_path / "cache" / "llm.sqlite")) == ["length", "stop"]
    assert seen.count == 3 and seen.bodies[2]["messages"] == seen.bodies[0]["messages"]
    assert (rerun.stats()["calls"], rerun.stats()["cache_hits"]) == (1, 1)


def test_an_answer_that_failed_its_check_is_kept_but_never_served(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    def no_red(answer: Colours) -> str | None:
        return "red is not allowed" if "red" in answer.colours else None

    with openai_server(lambda body, n: GOOD) as (url, seen):
        client = client_for(url, tmp_path, prompts, reasks=1)
        outcome = client.ask(pick("sea", no_red))
        again = client_for(url, tmp_path, prompts, reasks=1).ask(pick("sea", no_red))
    assert not outcome.ok and not again.ok
    assert seen.count == 4  # two asks in each run: nothing served from the cache
    stored = rows(tmp_path / "cache" / "llm.sqlite")
    assert len(stored) == 2 and all(r[2] == "red is not allowed" for r in stored)
    ledger = client.failures.rows()
    assert len(ledger) == 1
    row = ledger[0]
    assert (row["kind"], row["attempts"], row["raw"]) == ("failed_check", 2, GOOD)
    assert row["reason"] == "invalid_answer: red is not allowed"
    assert row["key"] == client.request(
        "t/pick", {"n": 2, "topic": "sea"}, Colours, check=no_red
    ).cache_key("openai", "local-test")


CHECKS = """
from tests.pipelines.llm.test_cache_semantics import Colours


def short(answer: Colours) -> str | None:
    return "too many" if len(answer.colours) > {limit} else None


def named(answer: Colours) -> str | None:
    return None if all(answer.colours) else "an empty name"
"""


def checks_module(tmp_path: Path, name: str, limit: int) -> Any:
    """A module of two checks, written to a file so their source can be read."""
    path = tmp_path / f"{name}.py"
    path.write_text(CHECKS.replace("{limit}", str(limit)))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_changing_a_check_re_asks_exactly_the_asks_it_judges(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    first = checks_module(tmp_path, "checks_v1", limit=5)
    with openai_server(lambda body, n: GOOD) as (url, seen):

        def asks(module: Any) -> list[Ask[Colours]]:
            return [pick(t, module.short) for t in ("a", "b")] + [
                pick(t, module.named) for t in ("c", "d", "e")
            ]

        assert all(o.ok for o in client_for(url, tmp_path, prompts).ask_many(asks(first)))
        assert seen.count == 5
        same = checks_module(tmp_path, "checks_same", limit=5)  # the same code, elsewhere
        assert all(o.ok for o in client_for(url, tmp_path, prompts).ask_many(asks(same)))
        assert seen.count == 5
        edited = checks_module(tmp_path, "checks_v2", limit=3)  # `short` changed, `named` not
        rerun = client_for(url, tmp_path, prompts)
        assert all(o.ok for o in rerun.ask_many(asks(edited)))
    assert sorted(topic_of(b) for b in seen.bodies[5:]) == ["a", "b"]
    assert (rerun.stats()["calls"], rerun.stats()["cache_hits"]) == (2, 3)


def test_the_answer_version_follows_shape_and_reading_code_not_the_place() -> None:
    same = create_model("Colours", colours=(list[str], ...))  # Colours' shape, made elsewhere

    class Checked(BaseModel):
        colours: list[str]

        @field_validator("colours")
        @classmethod
        def _some(cls, value: list[str]) -> list[str]:
            if not value:
                raise ValueError("no colours")
            return value

    class Wider(BaseModel):
        colours: list[str]
        note: str = ""

    def check(answer: Any) -> str | None:
        return None

    def other(answer: Any) -> str | None:
        return "never"

    base = answer_version(Colours, None)
    assert base == answer_version(same, None)  # same shape, no reading code: same version
    assert len({base, answer_version(Checked, None), answer_version(Wider, None)}) == 3
    assert answer_version(Colours, check) != answer_version(Colours, other)
    # a partial and a bound method are versioned by their function
    assert answer_version(Colours, functools.partial(check)) == answer_version(Colours, check)
    other.check_version = "2"  # type: ignore[attr-defined]
    pinned = answer_version(Colours, other)
    other.check_version = "3"  # type: ignore[attr-defined]
    assert answer_version(Colours, other) != pinned
    assert answer_version(None, None) == ""


def test_a_200_that_is_not_a_completion_is_a_failure_never_cached(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    bodies = iter(['{"object": "error", "detail": "upstream busy"}', "[]"])

    def reply(body: dict[str, Any], n: int) -> tuple[int, dict[str, str], str]:
        return (200, {}, next(bodies, '{"choices": []}'))

    with openai_server(reply) as (url, _):
        client = client_for(url, tmp_path, prompts)
        outcomes = list(client.ask_many([pick("sea"), pick("sky")]))
    assert not any(o.ok for o in outcomes)
    assert all(
        o.error.startswith("call_failed: the server answered without a completion")
        for o in outcomes
    )
    assert "upstream busy" in " ".join(o.error for o in outcomes)
    assert rows(tmp_path / "cache" / "llm.sqlite") == []
    assert {r["kind"] for r in client.failures.rows()} == {"call_failed"}


def test_the_ledger_file_and_its_top_reasons(tmp_path: Path, prompts: PromptLibrary) -> None:
    def reply(body: dict[str, Any], n: int) -> str | tuple[int, dict[str, str], str]:
        topic = topic_of(body)
        if topic.startswith("bad"):
            return (400, {}, '{"error": {"message": "context too long for ' + topic + '"}}')
        return "not json" if topic.startswith("junk") else GOOD

    asks = [pick(t) for t in ("ok", "bad1", "bad2", "bad3", "junk1")]
    with openai_server(reply) as (url, _):
        client = client_for(url, tmp_path, prompts)
        list(client.ask_many(asks))
    path = tmp_path / FAILURES
    assert write_failures(path, [client.failures]) == 4
    written = read_failures(path)
    assert sorted(r["kind"] for r in written) == ["call_failed"] * 3 + ["malformed"]
    junk = next(r for r in written if r["kind"] == "malformed")
    assert junk["raw"] == "not json" and junk["attempts"] == 2
    assert len({r["prompt_digest"] for r in written}) == 4
    top = top_reasons(written)
    # the three 400s differ only in the item they name: one reason, counted three times
    assert top[0] == ("t/pick", "call_failed: HTTP N: context too long for badN", 3)
    assert top[1] == ("t/pick", "malformed: the answer contains no JSON object", 1)
    assert read_failures(tmp_path / "missing.parquet") == []
    # benchsmith report lists a stage's commonest failures from its ledger
    stage = tmp_path / "data" / "lveval_baselines"
    stage.mkdir(parents=True)
    write_failures(stage / FAILURES, [client.failures])
    stats = {"stage": "lveval_baselines", "counts": {}, "dropped": {}, "llm": client.stats()}
    (stage / "stats.json").write_text(json.dumps(stats))
    shown = CliRunner().invoke(app, ["report", "--data", str(tmp_path / "data")])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert "4 failed asks in llm_failures.parquet; the commonest:" in text
    assert "3 × t/pick: call_failed: HTTP N: context too long for badN" in text
