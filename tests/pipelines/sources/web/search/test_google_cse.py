"""GoogleCSE against googleapiclient's HttpMockSequence with documented response bodies."""

from __future__ import annotations

import traceback
from datetime import UTC, datetime

import pytest
from googleapiclient.http import HttpMockSequence

from pipelines.sources.web.search import GoogleCSE, SearchError
from tests.pipelines.sources.web.search.google_bodies import (
    CSE_ID,
    empty_page,
    failing,
    ok,
    requested,
    search_page,
)

KEY = "AIzaTEST-key-0123456789abcdefghijklmnopq"
WHEN = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)


def _google(responses, **options):
    http = HttpMockSequence(list(responses))
    waits: list[float] = []
    options = {"retries": 3, "backoff_s": 1.0, **options}
    cse = GoogleCSE(KEY, CSE_ID, http=http, sleep=waits.append, clock=lambda: WHEN, **options)
    return cse, http, waits


def test_google_pages_until_num_results():
    query = "2026 Northfield flood"
    cse, http, _ = _google(
        [
            ok(search_page(query, 1, 10, 40)),
            ok(search_page(query, 11, 10, 40)),
            ok(search_page(query, 21, 5, 40)),
        ]
    )
    hits = cse.search(query, num=25, date_restrict="m6", language="lang_en")
    assert [h.rank for h in hits] == list(range(1, 26))
    assert [h.url for h in hits] == [
        f"https://news{i}.example/2026/flood-{i}" for i in range(1, 26)
    ]
    assert hits[0].title == "Flood report 1" and hits[0].snippet == "Snippet 1 about the flood."
    assert {(h.query, h.provider, h.retrieved_at) for h in hits} == {(query, "google_cse", WHEN)}
    sent = requested(http)
    assert [(p["start"], p["num"]) for p in sent] == [("1", "10"), ("11", "10"), ("21", "5")]
    for p in sent:
        assert (p["q"], p["cx"], p["dateRestrict"], p["lr"]) == (query, CSE_ID, "m6", "lang_en")
        assert p["key"] == KEY  # the client sends it; everything we write redacts it


def test_google_stops_when_there_is_no_next_page():
    query = "rare event"
    cse, http, _ = _google([ok(search_page(query, 1, 10, 13)), ok(search_page(query, 11, 3, 13))])
    hits = cse.search(query, num=30)
    assert [h.rank for h in hits] == list(range(1, 14))
    assert len(http.request_sequence) == 2
    assert "dateRestrict" not in requested(http)[0] and "lr" not in requested(http)[0]


def test_google_empty_result_has_no_items():
    cse, http, _ = _google([ok(empty_page("nothing at all"))])
    assert cse.search("nothing at all", num=10) == []
    assert len(http.request_sequence) == 1


def test_google_retries_429_with_backoff():
    query = "throttled"
    cse, http, waits = _google(
        [
            failing(429, "rateLimitExceeded", "Quota exceeded for quota metric 'Queries'"),
            ok(search_page(query, 1, 3, 3)),
        ]
    )
    hits = cse.search(query, num=10)
    assert [h.rank for h in hits] == [1, 2, 3]
    assert len(waits) == 1 and 0.5 <= waits[0] < 1.0  # the shared policy: 1 s, with jitter
    assert [p["start"] for p in requested(http)] == ["1", "1"]


def test_google_persistent_503_raises_search_error_without_the_key(caplog):
    cse, http, waits = _google([failing(503)] * 3, retries=2)
    with pytest.raises(SearchError) as info:
        cse.search("down", num=10)
    err = info.value
    assert "503" in str(err) and "after 3 attempts" in str(err)
    assert len(waits) == 2 and 0.5 <= waits[0] < 1.0 and 1.0 <= waits[1] < 2.0  # doubling
    printed = "".join(traceback.format_exception(err))
    for text in (str(err), repr(err), printed, caplog.text):
        assert KEY not in text
        assert CSE_ID not in text
    assert "key=REDACTED" in str(err)
    assert len(http.request_sequence) == 3


def test_google_does_not_retry_a_403():
    cse, http, waits = _google([failing(403, "dailyLimitExceeded", "Daily Limit Exceeded")])
    with pytest.raises(SearchError, match="refused") as info:
        cse.search("over quota", num=10)
    assert KEY not in str(info.value)
    assert waits == [] and len(http.request_sequence) == 1


def test_google_from_env_names_the_missing_variable(monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.delenv("GOOGLE_CSE_ID", raising=False)
    with pytest.raises(SearchError, match="GOOGLE_CSE_ID") as info:
        GoogleCSE.from_env()
    assert "GOOGLE_API_KEY" not in str(info.value) and KEY not in str(info.value)
    monkeypatch.delenv("GOOGLE_API_KEY")
    with pytest.raises(SearchError, match="GOOGLE_API_KEY and GOOGLE_CSE_ID"):
        GoogleCSE.from_env()


def test_google_from_env_reads_both_keys(monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_CSE_ID", CSE_ID)
    http = HttpMockSequence([ok(search_page("q", 1, 1, 1))])
    cse = GoogleCSE.from_env(retries=0, http=http)
    assert cse.secrets == (KEY, CSE_ID) and cse.policy.retries == 0
    assert [h.url for h in cse.search("q", num=1)] == ["https://news1.example/2026/flood-1"]


def test_google_waits_what_retry_after_asks():
    query = "throttled"
    throttled = failing(429, "rateLimitExceeded", "Quota exceeded")
    throttled[0]["retry-after"] = "7"
    cse, _, waits = _google([throttled, ok(search_page(query, 1, 3, 3))])
    assert [h.rank for h in cse.search(query, num=10)] == [1, 2, 3]
    assert waits == [7.0]
