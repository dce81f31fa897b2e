"""The lveval stage through the ``openai`` backend, against a scripted OpenAI-compatible server on
127.0.0.1: model-written questions, a confusing fact that first states the true answer (rejected
and re-asked with the reason), model-proposed replacements; a rerun is served from the cache."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pipelines.errors import LLMError
from pipelines.settings import Params
from pipelines.stages.lveval import run_lveval
from tests.support.canary import ARBITRARY, SK, Echo, key_variable, leaks, redacting_logs
from tests.support.openai_server import openai_server

_PASSAGE = re.compile(r"^\[([^\]\n]+)\]\n(.+?)(?=\n\n\[|\n\nWrite )", re.S | re.M)
_NUMBERED = re.compile(r"[^.!?\n]*\b(\d{2,4})\b[^.!?\n]*[.!?]")


def questions(prompt: str) -> str:
    out = []
    for passage_id, text in _PASSAGE.findall(prompt)[:3]:
        found = _NUMBERED.search(text)
        if found:
            sentence = found[0].strip()
            number = found[1]
            blanked = sentence.replace(number, "how many", 1).rstrip(".!?")
            out.append(
                {
                    "question": f"According to the report, {blanked}?",
                    "answers": [number],
                    "answer_keywords": number,
                    "hops": 1,
                    "evidence": [{"passage_id": passage_id, "quote": sentence}],
                }
            )
    return json.dumps({"questions": out})


def reply(body: dict[str, Any], n: int) -> str:
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    if "reading-comprehension" in system:
        return questions(prompt)
    if "confusing facts" in system:
        answer = re.search(r"True answer: (.+)", prompt)[1]
        evidence = re.search(r"^- (.+)$", prompt, re.M)[1]
        if len(messages) == 2:  # first ask: state the true answer, to be rejected
            return json.dumps({"fact": evidence})
        changed = str(int(answer) + 7)
        return "Here it is:\n" + json.dumps({"fact": evidence.replace(answer, changed)})
    if "anonymise" in system:
        return '```json\n{"rules": [{"orig": "Valdra", "repl": "Quixmoor"}]}\n```'
    return "I do not know."


def _scripted(params: Params, url: str, tmp_path: Path, **extra: Any) -> Any:
    """The llm settings for the scripted server, with a cache of the test's own."""
    update = {
        "backend": "openai",
        "base_url": url,
        "model": "scripted",
        "api_key_env": "BENCHSMITH_TEST_KEY",
        "cache": tmp_path / "llm.sqlite",
        "retries": 0,
        **extra,
    }
    return params.llm.model_copy(update=update)


@pytest.fixture()
def llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHSMITH_TEST_KEY", "sk-local-test")


def test_model_written_items_are_checked_reasked_and_cached(
    tmp_path: Path, params: Params, snapshot_entries: Path, llm_env: None
) -> None:
    settings = params.lveval.model_copy(update={"levels": ["2k", "4k"]})
    with openai_server(reply) as (url, log):
        llm = _scripted(params, url, tmp_path)
        stats = run_lveval(settings, entries=snapshot_entries, out=tmp_path / "a", llm=llm)
        calls = log.count
        with sqlite3.connect(llm.cache) as db:
            (rejected,) = db.execute(
                "SELECT COUNT(*) FROM responses WHERE rejected IS NOT NULL"
            ).fetchone()
        assert rejected > 0  # the confusing facts that stated the true answer
        again = run_lveval(settings, entries=snapshot_entries, out=tmp_path / "b", llm=llm)
        # every answer came from the cache but the rejected ones, which are asked again
        assert log.count - calls == rejected
    summary = json.loads((tmp_path / "a" / "stats.json").read_text())["llm"]
    facts = summary["by_prompt"]["lveval/confusing_fact"]
    assert facts["reasks"] >= stats.counts["qa_items"] > 0
    assert summary["backend"] == "openai"
    reasks = [b for b in log.bodies if len(b["messages"]) > 2]
    assert any("states the true answer" in b["messages"][-1]["content"] for b in reasks)
    records = [
        r
        for f in (tmp_path / "a" / "records").glob("*.parquet")
        for r in pq.read_table(f).to_pylist()
    ]
    assert {r["level"] for r in records} == {"2k", "4k"}
    clean = {(r["qa_id"], r["level"]): r["context"] for r in records if r["variant"] == "clean"}
    renamed = 0
    for row in records:
        if "cfi" in row["variant"]:
            assert row["confusing_facts"] and row["answers"][0] not in row["confusing_facts"][0]
        if "kpr" in row["variant"] and row["replacement_rules"]:
            assert not re.search(r"\bValdra\b", row["context"])  # "Valdran" is another word
            # the scripted rule renames Valdra for every item: wherever the passages held it
            held = re.search(r"\bValdra\b", clean[(row["qa_id"], row["level"])])
            assert ("Quixmoor" in row["context"]) == bool(held)
            renamed += bool(held)
    assert renamed > 0
    assert again.counts == stats.counts
    a = pq.read_table(tmp_path / "a" / "qa.parquet")
    assert a.equals(pq.read_table(tmp_path / "b" / "qa.parquet"))


def test_with_json_schema_each_question_ask_names_the_passages_it_shows(
    tmp_path: Path, params: Params, snapshot_entries: Path, llm_env: None
) -> None:
    settings = params.lveval.model_copy(update={"levels": ["2k"]})
    with openai_server(reply) as (url, log):
        llm = _scripted(params, url, tmp_path, response_format="json_schema")
        stats = run_lveval(settings, entries=snapshot_entries, out=tmp_path / "a", llm=llm)
    assert stats.counts["qa_items"] > 0
    asked = [b for b in log.bodies if "reading-comprehension" in b["messages"][0]["content"]]
    assert asked
    events = settings.events
    for body in asked:
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        shown = [passage_id for passage_id, _ in _PASSAGE.findall(prompt)]
        schema = body["response_format"]["json_schema"]["schema"]
        question = schema["properties"]["questions"]["items"]
        quote = question["properties"]["evidence"]["items"]["properties"]["passage_id"]
        assert quote["enum"] == shown
        limit = events.questions_per_event + events.multi_hop_per_event
        assert schema["properties"]["questions"]["maxItems"] == limit


@pytest.mark.parametrize("key", [SK, ARBITRARY], ids=["sk-shaped", "arbitrary"])
def test_a_key_the_server_echoes_in_errors_reaches_no_drop_cache_stats_log_or_console(
    tmp_path: Path,
    params: Params,
    snapshot_entries: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    key: str,
) -> None:
    variable = key_variable()  # only llm.api_key_env makes its value a secret
    monkeypatch.setenv(variable, key)
    settings = params.lveval.model_copy(update={"levels": ["2k"]})
    echo, refused = Echo(400, 429, 500, by_messages=True), Echo(401)
    caplog.set_level("DEBUG")
    with redacting_logs():
        with openai_server(echo) as (url, echo.log):
            llm = _scripted(params, url, tmp_path, api_key_env=variable, retries=1, backoff_s=0)
            stats = run_lveval(settings, entries=snapshot_entries, out=tmp_path / "out", llm=llm)
        with openai_server(refused) as (url, refused.log), pytest.raises(LLMError) as stopped:
            llm = _scripted(params, url, tmp_path, api_key_env=variable)
            run_lveval(settings, entries=snapshot_entries, out=tmp_path / "refused", llm=llm)
    assert {h["authorization"] for h in echo.log.headers} == {f"Bearer {key}"}  # it was sent
    drops = pq.read_table(tmp_path / "out" / "drops.parquet").to_pylist()
    details = {d["detail"] for d in drops if d["step"] == "questions"}
    assert stats.counts["qa_items"] == 0 and drops
    assert any(d.startswith("call_failed: HTTP 400: refused (sent with Bearer REDACTED)")
               for d in details)  # fmt: skip
    assert any("HTTP 429 after 2 attempts" in d for d in details)
    assert variable in str(stopped.value) and not (tmp_path / "refused").exists()
    out, err = capfd.readouterr()
    texts = [caplog.text, *(r.getMessage() for r in caplog.records), out, err, str(stopped.value)]
    assert leaks([key], folders=[tmp_path], texts=texts) == []
