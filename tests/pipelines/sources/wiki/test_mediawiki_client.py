import json

import pytest

from pipelines.errors import WikiApiError
from pipelines.sources.wiki.mediawiki_client import MediaWikiClient
from pipelines.sources.wiki.settings import ApiSettings
from tests.support.http_server import scripted_server

# what pymediawiki asks for when it connects: meta=siteinfo&siprop=extensions|general
SITEINFO = json.dumps(
    {
        "query": {
            "general": {
                "generator": "MediaWiki 1.39.17",
                "server": "http://127.0.0.1",
                "articlepath": "/wiki/$1",
                "sitename": "Test",
            },
            "extensions": [{"name": "TextExtracts"}],
        }
    }
)
OK = json.dumps({"query": {"pages": [{"title": "A", "pageid": 1}]}})
MAXLAG = json.dumps({"error": {"code": "maxlag", "info": "Waiting for db", "lag": 7}})
BAD = json.dumps({"error": {"code": "badvalue", "info": "Unrecognized value"}})
JSON = "application/json"


def _client(url: str, retries: int = 3) -> tuple[MediaWikiClient, list[float]]:
    waits: list[float] = []
    settings = ApiSettings(
        url=f"{url}/api.php",
        contact="ops@benchsmith.example",
        retries=retries,
        request_interval_s=0,
    )
    return MediaWikiClient(settings, sleep=waits.append), waits


def test_retries_server_errors_and_honours_maxlag_then_succeeds():
    script = [
        (200, JSON, SITEINFO),
        (503, "text/html", "<h1>busy</h1>"),
        (200, JSON, MAXLAG),
        (200, JSON, OK),
    ]
    with scripted_server(script) as (url, seen):
        client, waits = _client(url)
        answer = client.request({"action": "query", "titles": "A"})
    assert answer["query"]["pages"][0]["title"] == "A"
    assert len(seen) == 4
    assert len(waits) == 2 and waits[1] >= 7  # the advertised lag is waited out
    assert all("maxlag=5" in r["path"] for r in seen[1:])


def test_user_agent_follows_wikimedia_policy():
    with scripted_server([(200, JSON, SITEINFO), (200, JSON, OK)]) as (url, seen):
        client, _ = _client(url)
        client.request({"action": "query"})
    agent = seen[-1]["user_agent"]
    assert agent.startswith("benchsmith/") and "(ops@benchsmith.example)" in agent
    assert "pymediawiki/" in agent


def test_gives_up_with_a_message_naming_the_url():
    with scripted_server([(200, JSON, SITEINFO), (502, "text/html", "bad gateway")]) as (url, _):
        client, waits = _client(url, retries=2)
        with pytest.raises(WikiApiError, match=r"api\.php: giving up after 3 attempts"):
            client.request({"action": "query"})
    assert len(waits) == 2


def test_api_errors_are_not_retried():
    with scripted_server([(200, JSON, SITEINFO), (200, JSON, BAD)]) as (url, seen):
        client, waits = _client(url)
        with pytest.raises(WikiApiError, match="badvalue"):
            client.request({"action": "query"})
    assert waits == [] and len(seen) == 2


def test_unreachable_api_is_reported_with_its_url():
    settings = ApiSettings(
        url="http://127.0.0.1:9/api.php", contact="x@benchsmith.example", timeout_s=2
    )
    with pytest.raises(WikiApiError, match=r"127\.0\.0\.1:9/api\.php"):
        MediaWikiClient(settings).request({"action": "query"})


def test_rate_limit_and_read_only_errors_are_retried():
    limited = json.dumps({"error": {"code": "ratelimited", "info": "slow down"}})
    readonly = json.dumps({"error": {"code": "readonly", "info": "maintenance"}})
    script = [(200, JSON, SITEINFO), (200, JSON, limited), (200, JSON, readonly), (200, JSON, OK)]
    with scripted_server(script) as (url, seen):
        client, waits = _client(url)
        assert client.request({"action": "query"})["query"]["pages"][0]["title"] == "A"
    assert len(waits) == 2 and len(seen) == 4


def test_forbidden_says_what_to_check():
    with scripted_server([(200, JSON, SITEINFO), (403, "text/plain", "UA blocked")]) as (url, _):
        client, _ = _client(url)
        with pytest.raises(WikiApiError, match=r"403 Forbidden.*wiki\.api\.contact"):
            client.request({"action": "query"})
