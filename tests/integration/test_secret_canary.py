"""A search key in the environment never reaches an output file, the archive, the search log,
the logs or the console, even when the live stage queries Google (through googleapiclient's own
test double), nor when a loopback Google echoes it back in 429, 500, 400 and 401 answers, nor
when loopback Brave and SerpApi echo theirs while the provider chain moves from one to the
next."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httplib2
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from googleapiclient.http import HttpMockSequence

from pipelines.settings import load_params
from pipelines.snapshot.site_server import in_thread
from pipelines.sources.web.search import GoogleCSE, SearchError
from pipelines.stages.web import run_web
from pipelines.stages.wiki import run_wiki
from tests.support.canary import leaks, redacting_logs
from tests.support.http_server import reply
from tests.support.search_apis import BRAVE_KEY, SERPAPI_KEY, Answer, brave_error, search_apis
from tests.support.snapshot import ROOT, live_web_missing_one_query

pytestmark = pytest.mark.integration

KEY = "AIzaCANARY-0123456789abcdefghijklmnopqrstu"
CSE = "cx-canary-0123456789"


def test_key_reaches_no_file_and_no_log(tmp_path, monkeypatch, caplog, no_network):
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_CSE_ID", CSE)
    # the search log lacks one event's query, so the stage must ask Google for it
    sources, asked, answer = live_web_missing_one_query(tmp_path, ["google_cse"])
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


class _Loopback(httplib2.Http):
    """httplib2 sending each request to ``base`` (a loopback server) instead of Google."""

    def __init__(self, base: str):
        super().__init__(timeout=5)
        self.base = base

    def request(self, uri: str, *args: Any, **kwargs: Any) -> Any:
        parts = urlsplit(uri)
        return super().request(f"{self.base}{parts.path}?{parts.query}", *args, **kwargs)


def _google(**options: Any) -> Any:
    """A ``GoogleCSE.from_env`` building the provider with the canary keys and ``options``."""
    return classmethod(lambda cls, **kw: cls(KEY, CSE, **options, **kw))


@contextmanager
def echoing_google(statuses: list[int], answer: str) -> Iterator[tuple[str, list[str]]]:
    """A loopback Custom Search API answering with ``statuses`` in turn (then 200 with
    ``answer``), every error quoting the ``key`` and ``cx`` it was sent in its body and headers;
    yield its base URL and the keys it was sent."""
    sent: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            key, cx = query["key"][0], query["cx"][0]
            sent.append(key)
            status = statuses[len(sent) - 1] if len(sent) <= len(statuses) else 200
            message = f"API key {key} (engine {cx}) refused: {self.path}"
            error = {"error": {"code": status, "message": message, "errors": [{"reason": key}]}}
            data = (answer if status == 200 else json.dumps(error)).encode()
            echoed = {"X-Echo-Key": key, "Www-Authenticate": f'Key realm="{cx}", key="{key}"'}
            reply(self, status, data, "application/json", {"Retry-After": "0", **echoed})

        def log_message(self, *args: object) -> None:
            pass

    with in_thread(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", sent


def test_a_key_google_echoes_in_errors_reaches_no_file_log_or_console(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    no_network,
    snapshot_data: Path,
):
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_CSE_ID", CSE)
    sources, asked, answer = live_web_missing_one_query(tmp_path, ["google_cse"])
    without_the_query = sources.search_log.read_text()
    body = {
        "kind": "customsearch#search",
        "queries": {"request": [{"startIndex": 1, "count": len(answer)}]},
        "items": [{"link": h["url"], "title": h["title"], "snippet": h["snippet"]} for h in answer],
    }
    articles = pq.read_table(snapshot_data / "wiki" / "articles.parquet")
    one_event = tmp_path / "articles.parquet"  # the event whose query Google is asked
    pq.write_table(articles.filter(pc.equal(articles["title"], asked)), one_event)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="pipelines")  # the CLI may have set it to INFO

    def web(statuses: list[int]) -> Any:
        """The web stage while Google answers ``statuses`` first: its stats or its error."""
        sources.search_log.write_text(without_the_query)  # each run asks Google again
        with echoing_google(statuses, json.dumps(body)) as (url, sent):
            google = _google(http=_Loopback(url), sleep=lambda s: None)
            monkeypatch.setattr(GoogleCSE, "from_env", google)
            out = tmp_path / f"out-{statuses[0]}"
            try:
                return run_web(
                    sources, articles=snapshot_data / "wiki" / "articles.parquet", out=out
                )
            except SearchError as exc:
                assert not out.exists() or not any(out.iterdir())
                return exc
            finally:
                assert sent[0] == KEY  # the key went out

    with redacting_logs(), no_network(allow=["127.0.0.1"]) as attempts:
        stats, partial, refused = [web(statuses) for statuses in ([429, 500], [400], [401])]
    assert attempts == []  # nothing but the loopback server was asked
    assert stats.counts["candidates"] > 0
    assert "HTTP 429" in caplog.text and "HTTP 500" in caplog.text  # retried, then answered
    assert f"google_cse: {len(answer)} hits for {asked!r}" in caplog.text
    # a 400 fails that one query (the stage goes on); a 401 leaves no provider to serve
    assert partial.counts["candidates"] > 0
    failure = json.loads((tmp_path / "out-400" / "stats.json").read_text())["search"]["failed"]
    assert list(failure) == [asked] and "HTTP 400" in failure[asked]
    assert isinstance(refused, SearchError) and "key missing or refused" in str(refused)
    refusals = [failure[asked], str(refused)]
    assert all("API key REDACTED (engine REDACTED) refused" in r for r in refusals)
    out, err = capfd.readouterr()
    texts = [caplog.text, *(r.getMessage() for r in caplog.records), out, err, *refusals]
    assert leaks([KEY, CSE], folders=[tmp_path], texts=texts) == []


def test_keys_brave_and_serpapi_echo_reach_no_file_log_or_console(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    no_network,
    snapshot_data: Path,
):
    sources, asked, answer = live_web_missing_one_query(tmp_path, ["brave", "serpapi"])
    monkeypatch.setenv("BRAVE_API_KEY", BRAVE_KEY)
    monkeypatch.setenv("SERPAPI_KEY", SERPAPI_KEY)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="pipelines")
    organic = [{"position": i + 1, "title": h["title"], "link": h["url"], "snippet": h["snippet"]}
               for i, h in enumerate(answer)]  # fmt: skip
    echo = {"X-Echo-Key": BRAVE_KEY, "Retry-After": "0"}
    with search_apis() as apis:
        apis.scripted += [
            Answer(429, brave_error(429, "RATE_LIMITED", f"slow down, {BRAVE_KEY}"), echo),
            Answer(422, brave_error(422, "SUBSCRIPTION_TOKEN_INVALID", f"bad {BRAVE_KEY}"), echo),
            Answer(200, {"search_metadata": {"status": "Success"}, "organic_results": organic,
                         "echo": f"api_key={SERPAPI_KEY}"}),
        ]  # fmt: skip
        search = sources.search.model_copy(
            update={
                "brave": sources.search.brave.model_copy(
                    update={"base_url": apis.base_url + "/res/v1"}
                ),
                "serpapi": sources.search.serpapi.model_copy(update={"base_url": apis.base_url}),
            }
        )
        with redacting_logs(), no_network(allow=["127.0.0.1"]) as attempts:
            stats = run_web(
                sources.model_copy(update={"search": search}),
                articles=snapshot_data / "wiki" / "articles.parquet",
                out=tmp_path / "out",
            )
    assert attempts == [] and stats.counts["candidates"] > 0
    assert apis.requests[0]["headers"]["X-Subscription-Token"] == BRAVE_KEY  # it went out
    assert apis.requests[2]["params"]["api_key"] == SERPAPI_KEY
    summary = json.loads((tmp_path / "out" / "stats.json").read_text())["search"]
    assert summary["answered"] == {"serpapi": 1} and list(summary["unavailable"]) == ["brave"]
    recorded = [json.loads(line) for line in sources.search_log.read_text().splitlines()]
    assert [r["url"] for r in recorded if r["query"] == asked] == [h["url"] for h in answer]
    assert {r["provider"] for r in recorded if r["query"] == asked} == {"serpapi"}
    out, err = capfd.readouterr()
    texts = [caplog.text, *(r.getMessage() for r in caplog.records), out, err]
    assert "HTTP 429" in caplog.text and "set aside" in caplog.text
    assert leaks([BRAVE_KEY, SERPAPI_KEY], folders=[tmp_path], texts=texts) == []
