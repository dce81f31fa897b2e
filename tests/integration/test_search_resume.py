"""A live query that Google answers with no hits is recorded as asked, so a rerun does not spend
quota on it again (Google through googleapiclient's own test double)."""

from __future__ import annotations

import json

import pytest
from googleapiclient.http import HttpMockSequence

from pipelines.settings import load_params
from pipelines.sources.web.search import GoogleCSE
from pipelines.sources.web.search.recorded import NoHits, read_entries
from pipelines.stages.web import run_web
from pipelines.stages.wiki import run_wiki
from tests.support.snapshot import ROOT, live_web_missing_one_query

pytestmark = pytest.mark.integration


def test_a_query_without_hits_is_asked_once(tmp_path, monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    monkeypatch.setenv("GOOGLE_CSE_ID", "test-cx")
    sources, asked, _ = live_web_missing_one_query(tmp_path, ["google_cse"])
    empty = {"kind": "customsearch#search", "queries": {"request": [{"count": 0}]}}
    google = HttpMockSequence([({"status": "200"}, json.dumps(empty))])
    monkeypatch.setattr(
        GoogleCSE, "from_env", classmethod(lambda cls, **kw: cls("k", "cx", http=google, **kw))
    )
    params = load_params(ROOT / "params.yaml")
    run_wiki(params.wiki, out=tmp_path / "wiki")
    run_web(sources, articles=tmp_path / "wiki" / "articles.parquet", out=tmp_path / "out")
    assert len(google.request_sequence) == 1
    markers = [e for e in read_entries(tmp_path / "search.jsonl") if e.query == asked]
    assert len(markers) == 1 and isinstance(markers[0], NoHits)

    run_web(sources, articles=tmp_path / "wiki" / "articles.parquet", out=tmp_path / "again")
    assert len(google.request_sequence) == 1  # the rerun did not ask Google again
