"""Brave, SerpApi (through its official client) and SearXNG against a loopback server that
answers with each API's documented JSON (tests/support/search_apis.py cites the pages)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pipelines.sources.web.search.base import SearchError, SearchUnavailable
from pipelines.sources.web.search.brave import BraveSearch
from pipelines.sources.web.search.searxng import SearXNG
from pipelines.sources.web.search.serp_api import SerpApi
from tests.support.search_apis import (
    BRAVE_KEY,
    SERPAPI_KEY,
    Answer,
    brave_error,
    hit,
    search_apis,
)

WHEN = datetime(2026, 11, 27, 9, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def server():
    with search_apis() as running:
        yield running


@pytest.fixture
def apis(server):
    """The module's server, with no requests seen and nothing scripted."""
    server.requests.clear()
    server.scripted.clear()
    return server


PROVIDERS = ("brave", "serpapi", "searxng")
PAGE_PARAM = {"brave": "offset", "serpapi": "start", "searxng": "pageno"}


def make(name: str, base: str, waits: list[float], *, key: str | None = None, **options):
    """Provider ``name`` pointed at the loopback server ``base``."""
    common = {"sleep": waits.append, "clock": lambda: WHEN, "backoff_s": 0.01, **options}
    if name == "brave":
        return BraveSearch(key or BRAVE_KEY, base_url=f"{base}/res/v1", **common)
    if name == "serpapi":
        return SerpApi(key or SERPAPI_KEY, base_url=base, **common)
    return SearXNG(base, **common)


@pytest.mark.parametrize("name", PROVIDERS)
def test_pages_until_enough_hits(name, apis):
    waits: list[float] = []
    hits = make(name, apis.base_url, waits).search("Northfield flood n40", num=25)
    assert [h.rank for h in hits] == list(range(1, 26))
    assert [h.url for h in hits] == [hit(i)["url"] for i in range(1, 26)]
    assert hits[0].title == "Story 1" and hits[0].snippet == "Snippet 1 about the event."
    assert {(h.provider, h.query, h.retrieved_at) for h in hits} == {
        (name, "Northfield flood n40", WHEN)
    }
    pages = [r["params"][PAGE_PARAM[name]] for r in apis.requests]
    assert pages == {"brave": ["0", "1"], "serpapi": ["0", "10", "20"],
                     "searxng": ["1", "2", "3"]}[name]  # fmt: skip
    assert not waits


@pytest.mark.parametrize("name", PROVIDERS)
def test_fewer_results_than_asked_and_none(name, apis):
    provider = make(name, apis.base_url, [])
    assert [h.rank for h in provider.search("small event n13", num=50)] == list(range(1, 14))
    assert provider.search("unheard of n0", num=10) == []


@pytest.mark.parametrize("name", PROVIDERS)
def test_429_waits_as_retry_after_says_then_answers(name, apis):
    busy = Answer(429, {"error": "busy"}, {"Retry-After": "2"})
    if name == "brave":
        busy = Answer(429, brave_error(429, "RATE_LIMITED", "Request rate limit exceeded"),
                      {"Retry-After": "2"})  # fmt: skip
    waits: list[float] = []
    apis.scripted.extend([busy, Answer(503, {"error": "down"})])
    hits = make(name, apis.base_url, waits).search("storm n5", num=5)
    assert len(hits) == 5
    assert waits[0] == 2.0 and len(waits) == 2  # Retry-After, then backoff for the 503
    assert len(apis.requests) == 3


@pytest.mark.parametrize("name", PROVIDERS)
def test_retries_spent_fail_the_query_not_the_provider(name, apis):
    apis.scripted.extend([Answer(503, {"error": "down"})] * 3)
    provider = make(name, apis.base_url, [], retries=2)
    with pytest.raises(SearchError) as info:
        provider.search("storm", num=5)
    assert not isinstance(info.value, SearchUnavailable)
    assert name in str(info.value) and "'storm'" in str(info.value)
    assert "after 3 attempts" in str(info.value)
    assert len(provider.search("storm n2", num=5)) == 2  # the next query is served


@pytest.mark.parametrize("name", ["brave", "serpapi"])
def test_bad_key_sets_the_provider_aside(name, apis):
    provider = make(name, apis.base_url, [], key="wrong-key-0123456789")
    with pytest.raises(SearchUnavailable, match="key missing or refused") as info:
        provider.search("anything", num=5)
    status = {"brave": 422, "serpapi": 401}[name]  # Brave answers a bad token with 422
    assert info.value.provider == name and f"HTTP {status}" in str(info.value)
    assert "wrong-key-0123456789" not in str(info.value)
    assert len(apis.requests) == 1  # not retried


def test_searxng_without_json_format_names_the_setting(apis):
    apis.scripted.extend([Answer(403, "<html>Forbidden</html>")])
    with pytest.raises(SearchUnavailable, match=r"formats: \[html, json\]"):
        make("searxng", apis.base_url, []).search("anything", num=5)


@pytest.mark.parametrize(
    ("name", "spent"),
    [
        ("brave", Answer(429, brave_error(429, "QUOTA_LIMITED", "Monthly quota spent"))),
        ("serpapi", Answer(429, {"error": "Your account has run out of searches."})),
    ],
)
def test_quota_spent_is_for_good_and_not_retried(name, spent, apis):
    waits: list[float] = []
    apis.scripted.extend([spent])
    with pytest.raises(SearchUnavailable, match="quota spent"):
        make(name, apis.base_url, waits).search("anything", num=5)
    assert waits == [] and len(apis.requests) == 1


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize("body", ['{"results": [{"url": "https://a.example/", "ti', "<html>", "[]"])
def test_malformed_answer_names_provider_and_query(name, body, apis):
    apis.scripted.extend([Answer(200, body)])
    with pytest.raises(SearchError) as info:
        make(name, apis.base_url, []).search("Lake Orrin fire", num=5)
    message = str(info.value)
    assert not isinstance(info.value, SearchUnavailable)
    assert name in message and "'Lake Orrin fire'" in message


@pytest.mark.parametrize("name", ["brave", "serpapi"])
def test_a_key_echoed_in_an_error_never_reaches_the_message(name, apis):
    key = BRAVE_KEY if name == "brave" else SERPAPI_KEY
    echo = Answer(400, {"error": f"bad request with key {key}", "type": "ErrorResponse"})
    apis.scripted.extend([echo])
    with pytest.raises(SearchError) as info:
        make(name, apis.base_url, []).search("echo", num=5)
    assert key not in str(info.value) and "REDACTED" in str(info.value)
    if name == "serpapi":  # the official client sends the key in the URL
        assert apis.requests[0]["params"]["api_key"] == key


def test_date_and_language_map_onto_each_api(apis):
    make("brave", apis.base_url, []).search("a n1", num=1, date_restrict="m1",
                                            language="lang_en")  # fmt: skip
    make("brave", apis.base_url, []).search("b n1", num=1, date_restrict="m6",
                                            language="lang_zh-TW")  # fmt: skip
    make("serpapi", apis.base_url, []).search("c n1", num=1, date_restrict="m6",
                                              language="lang_en")  # fmt: skip
    make("searxng", apis.base_url, []).search("d n1", num=1, date_restrict="m6",
                                              language="lang_en")  # fmt: skip
    brave1, brave6, serp, searx = (r["params"] for r in apis.requests)
    assert (brave1["freshness"], brave1["search_lang"], brave1["count"]) == ("pm", "en", "1")
    assert (brave6["freshness"], brave6["search_lang"]) == ("2026-05-27to2026-11-27", "zh-hant")
    assert serp["tbs"] == "cdr:1,cd_min:05/27/2026,cd_max:11/27/2026" and serp["lr"] == "lang_en"
    assert (searx["time_range"], searx["language"]) == ("year", "en")


def test_searxng_reports_what_it_cannot_honour():
    provider = SearXNG("http://127.0.0.1:9")
    assert provider.unsupported(date_restrict="m1", language="lang_en") == []
    assert provider.unsupported(date_restrict="m6", language=None) == [
        "date_restrict m6: SearXNG has day, week, month and year only; widened to time_range=year"
    ]
    assert "without one" in provider.unsupported(date_restrict="y3", language=None)[0]
    assert BraveSearch("k" * 20).unsupported(date_restrict="m6", language="lang_en") == []
