"""The provider chain and the live searcher, with providers built from settings and the
environment, against the loopback stand-ins of tests/support/search_apis.py."""

from __future__ import annotations

import json

import pytest
from googleapiclient.http import HttpMockSequence

from pipelines.sources.web.search import GoogleCSE, SearchError, SearchSettings
from pipelines.sources.web.search.base import SearchUnavailable
from pipelines.sources.web.search.chain import AllProvidersUnavailable, ProviderChain
from pipelines.sources.web.search.registry import live_provider
from pipelines.sources.web.searcher import Searcher
from pipelines.sources.web.settings import WebSettings
from tests.pipelines.sources.web.search.google_bodies import CSE_ID, failing
from tests.support.search_apis import SERPAPI_KEY, Answer, search_apis


@pytest.fixture(scope="module")
def server():
    with search_apis() as running:
        yield running


@pytest.fixture
def apis(server, monkeypatch):
    """The module's server, fresh; SerpApi's key set and Brave's not."""
    server.requests.clear()
    server.scripted.clear()
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    monkeypatch.setenv("SERPAPI_KEY", SERPAPI_KEY)
    return server


def _settings(base: str, providers: list[str], **extra) -> SearchSettings:
    given = {
        "brave": {"base_url": f"{base}/res/v1"},
        "serpapi": {"base_url": base},
        "searxng": {"base_url": base},
        **extra,
    }
    return SearchSettings(providers=providers, retries=1, **given)


def _chain(settings: SearchSettings) -> ProviderChain:
    def build(name: str):
        provider = live_provider(name, settings)
        provider._sleep = lambda s: None  # no real waits in tests
        if hasattr(provider, "_api"):
            provider._api._sleep = lambda s: None
        return provider

    return ProviderChain(
        settings.providers, build, date_restrict=settings.date_restrict, language=settings.language
    )


def test_the_next_provider_serves_when_one_fails_for_good(apis):
    chain = _chain(_settings(apis.base_url, ["brave", "serpapi", "searxng"]))
    hits, by = chain.search("first n3", num=10)
    assert by == "serpapi" and [h.provider for h in hits] == ["serpapi"] * 3
    apis.scripted.append(Answer(429, {"error": "Your account has run out of searches."}))
    hits, by = chain.search("second n4", num=10)
    assert by == "searxng" and len(hits) == 4
    hits, by = chain.search("third n2", num=10)  # serpapi is not asked again
    assert by == "searxng" and len(hits) == 2
    report = chain.report
    assert dict(report.answered) == {"serpapi": 1, "searxng": 2}
    assert set(report.unavailable) == {"brave", "serpapi"}
    assert "BRAVE_API_KEY" in report.unavailable["brave"]
    assert "quota spent" in report.unavailable["serpapi"]
    asked = [(r["path"], r["params"].get("engine", "searxng")) for r in apis.requests]
    # serpapi once, serpapi's spent answer, then SearXNG pages until an empty one
    assert asked == [("/search", "google")] * 2 + [("/search", "searxng")] * 4


def test_a_query_no_provider_answers_fails_alone(apis):
    chain = _chain(_settings(apis.base_url, ["serpapi", "searxng"]))
    apis.scripted.extend([Answer(503, {"error": "down"})] * 2 + [Answer(200, "{trunc")])
    assert chain.search("doomed", num=5) is None
    reason = chain.report.failed["doomed"]
    assert "serpapi: serpapi failed for query 'doomed' after 2 attempts" in reason
    assert "searxng: searxng answered query 'doomed' with not JSON" in reason
    assert chain.report.unavailable == {}
    assert chain.search("fine n1", num=5)[1] == "serpapi"


def test_no_provider_that_can_serve_is_an_error_naming_each(apis):
    chain = _chain(_settings(apis.base_url, ["brave", "searxng"], searxng={}))
    with pytest.raises(AllProvidersUnavailable) as info:
        chain.search("anything", num=5)
    assert "BRAVE_API_KEY" in str(info.value)
    assert "web.search.searxng.base_url" in str(info.value)


def test_settings_a_provider_cannot_honour_are_reported(apis):
    chain = _chain(_settings(apis.base_url, ["searxng"], date_restrict="m6"))
    chain.search("dated n1", num=5)
    assert chain.report.unsupported == {
        "searxng": [
            "date_restrict m6: SearXNG has day, week, month and year only; widened to "
            "time_range=year"
        ]
    }
    assert apis.requests[0]["params"]["time_range"] == "year"


def test_live_searcher_records_who_answered_and_replays_on_resume(apis, tmp_path):
    web = WebSettings(
        mode="live",
        archive=tmp_path / "archive",
        search_log=tmp_path / "search.jsonl",
        search=_settings(apis.base_url, ["brave", "serpapi"]).model_dump(),
    )
    searcher = Searcher(web)
    searcher.chain._build = _chain(web.search)._build
    assert len(searcher.search("logged n3")) == 3
    assert searcher.search("empty n0") == []
    rows = [json.loads(line) for line in web.search_log.read_text("utf-8").splitlines()]
    assert {r["provider"] for r in rows} == {"serpapi"} and rows[-1]["no_hits"] is True
    assert SERPAPI_KEY not in web.search_log.read_text("utf-8")
    stats = searcher.stats()
    assert stats["answered"] == {"serpapi": 2} and "brave" in stats["unavailable"]

    asked = len(apis.requests)
    again = Searcher(web)
    assert [h.url for h in again.search("logged n3")] == [
        f"https://news{i}.example/story-{i}" for i in (1, 2, 3)
    ]
    assert again.search("empty n0") == [] and len(apis.requests) == asked
    assert again.stats()["replayed"] == 2 and again.stats()["answered"] == {}


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (410, "Gone"),
        (403, "This project does not have the access to Custom Search JSON API."),
    ],
)
def test_google_cse_closed_to_a_project_names_the_replacement_settings(status, message):
    http = HttpMockSequence([failing(status, "accessNotConfigured", message)])
    cse = GoogleCSE("AIzaTEST-key-0123456789abcdefghijklmnopq", CSE_ID, http=http)
    with pytest.raises(SearchUnavailable) as info:
        cse.search("anything", num=5)
    text = str(info.value)
    assert "web.search.providers" in text and "BRAVE_API_KEY" in text and "2027-01-01" in text
    assert "AIzaTEST" not in text


def test_google_cse_error_for_one_query_is_not_for_good():
    http = HttpMockSequence([failing(400, "invalid", "Invalid Value")])
    cse = GoogleCSE("AIzaTEST-key-0123456789abcdefghijklmnopq", CSE_ID, http=http)
    with pytest.raises(SearchError) as info:
        cse.search("bad", num=5)
    assert not isinstance(info.value, SearchUnavailable) and "HTTP 400" in str(info.value)
