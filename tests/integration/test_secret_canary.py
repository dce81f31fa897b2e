"""A Google key in the environment never reaches an output file, the archive, the search log or
the logs, even when the live stage queries Google (through googleapiclient's own test double)."""

from __future__ import annotations

import json
import logging

import pytest
from googleapiclient.http import HttpMockSequence

from pipelines.settings import load_params
from pipelines.sources.web.search import GoogleCSE
from pipelines.stages.web import run_web
from pipelines.stages.wiki import run_wiki
from tests.support.snapshot import ROOT, live_web_missing_one_query

pytestmark = pytest.mark.integration

KEY = "AIzaCANARY-0123456789abcdefghijklmnopqrstu"
CSE = "cx-canary-0123456789"


def test_key_reaches_no_file_and_no_log(tmp_path, monkeypatch, caplog, no_network):
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_CSE_ID", CSE)
    # the search log lacks one event's query, so the stage must ask Google for it
    sources, asked, answer = live_web_missing_one_query(tmp_path)
    body = {
        "kind": "customsearch#search",
        "queries": {"request": [{"startIndex": 1, "count": len(answer)}]},
        "items": [{"link": h["url"], "title": h["title"], "snippet": h["snippet"]} for h in answer],
    }
    google = HttpMockSequence([({"status": "200"}, json.dumps(body))])
    monkeypatch.setattr(
        GoogleCSE, "from_env", classmethod(lambda cls, **kw: cls(KEY, CSE, http=google, **kw))
    )
    params = load_params(ROOT / "params.yaml")
    run_wiki(params.wiki, out=tmp_path / "wiki")
    caplog.set_level(logging.DEBUG)
    with no_network():  # every URL is archived already; Google answers from the test double
        stats = run_web(
            sources, articles=tmp_path / "wiki" / "articles.parquet", out=tmp_path / "out"
        )
    assert stats.counts["candidates"] > 0
    recorded = (tmp_path / "search.jsonl").read_text()
    assert asked in recorded  # the live answer was recorded
    assert f"key={KEY}" in google.request_sequence[0][0] or KEY in str(google.request_sequence)

    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert KEY.encode() not in data and CSE.encode() not in data, path
    assert KEY not in caplog.text and CSE not in caplog.text
