"""A run killed with SIGKILL mid-way through its model calls resumes from the response cache:
the rerun asks the server only what the first run did not get answered."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from pipelines.llm import Ask, LLMClient, LLMSettings, PromptLibrary, ResponseCache
from pipelines.llm.backends.openai_api import OpenAIBackend
from tests.pipelines.llm.conftest import PICK
from tests.support.openai_server import openai_server
from tests.support.snapshot import ROOT

pytestmark = pytest.mark.integration

TOPICS = [f"topic {i}" for i in range(40)]
CHILD = """
import json, sys
from pathlib import Path
from pydantic import BaseModel
from pipelines.llm import Ask, LLMClient, LLMSettings, PromptLibrary, ResponseCache
from pipelines.llm.backends.openai_api import OpenAIBackend

class Colours(BaseModel):
    colours: list[str]

settings = LLMSettings.model_validate_json(sys.argv[1])
client = LLMClient(settings, OpenAIBackend(settings), cache=ResponseCache(settings.cache),
                   prompts=PromptLibrary(Path(sys.argv[2])))
for outcome in client.ask_many(Ask("t/pick", {"n": 1, "topic": t}, Colours) for t in json.loads(sys.argv[3])):
    assert outcome.ok
"""


class Colours(BaseModel):
    colours: list[str]


def reply(body: dict, n: int) -> str:
    topic = body["messages"][-1]["content"].rsplit("Topic: ", 1)[1].rstrip(".")
    return json.dumps({"colours": [topic]})


def test_killed_run_resumes_without_asking_again(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    (prompts / "t").mkdir(parents=True)
    (prompts / "t" / "pick.j2").write_text(PICK)
    (prompts / "reask.j2").write_text("[user]\n{{ error }}\n")
    with openai_server(reply, latency_s=0.05) as (url, seen):
        settings = LLMSettings(
            backend="openai", base_url=url, model="m", concurrency=2, cache=tmp_path / "llm.sqlite"
        )
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                CHILD,
                settings.model_dump_json(),
                str(prompts),
                json.dumps(TOPICS),
            ],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        deadline = time.monotonic() + 60
        while seen.count < len(TOPICS) // 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        assert child.returncode == -signal.SIGKILL
        first = seen.count
        assert 0 < first < len(TOPICS), "killed half way"
        cached = len(ResponseCache(settings.cache))
        assert cached <= first  # answers in flight at the kill were lost, never half-written

        client = LLMClient(
            settings,
            OpenAIBackend(settings),
            cache=ResponseCache(settings.cache),
            prompts=PromptLibrary(prompts),
        )
        outcomes = list(
            client.ask_many(Ask("t/pick", {"n": 1, "topic": t}, Colours) for t in TOPICS)
        )
    assert [o.value.colours[0] for o in outcomes] == TOPICS
    stats = client.stats()
    assert stats["cache_hits"] == cached
    assert stats["calls"] == len(TOPICS) - cached == seen.count - first
