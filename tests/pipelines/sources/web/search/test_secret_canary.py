"""A fake key goes through a mocked live search and recording; it must surface nowhere."""

from __future__ import annotations

import logging

from googleapiclient.http import HttpMockSequence

from pipelines.sources.web.search import GoogleCSE, RecordedProvider, SearchLog
from tests.pipelines.sources.web.search.google_bodies import failing, ok, search_page

CANARY = "AIzaFAKE-canary-0123456789abcdefghijklmnop"
CANARY_CX = "canary-cx-9f8e7d6c5b4a"


def test_secret_canary_never_reaches_log_file_or_logs(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    query = "Canary Valley earthquake"
    http = HttpMockSequence(
        [
            failing(429, "rateLimitExceeded", "Quota exceeded"),
            ok(search_page(query, 1, 10, 12)),
            failing(500),
            ok(search_page(query, 11, 2, 12)),
        ]
    )
    waits: list[float] = []
    cse = GoogleCSE(CANARY, CANARY_CX, http=http, sleep=waits.append, backoff_s=0.5)
    hits = cse.search(query, num=20)
    assert [h.rank for h in hits] == list(range(1, 13)) and len(waits) == 2
    assert all(0.25 <= w < 0.5 for w in waits)  # two first retries: 0.5 s with jitter
    assert all(CANARY in uri for uri, *_ in http.request_sequence)  # it was really sent

    path = tmp_path / "search.jsonl"
    assert SearchLog(path, secrets=cse.secrets).append(hits) == 12

    text = path.read_text("utf-8")
    assert CANARY not in text and CANARY_CX not in text
    assert "URL being requested" in caplog.text  # the client logged its URI, redacted
    assert "key=REDACTED" in caplog.text
    logged = caplog.text + "".join(r.getMessage() for r in caplog.records)
    assert CANARY not in logged and CANARY_CX not in logged

    assert RecordedProvider(path).search(query, num=20) == hits
    assert RecordedProvider(path, provider="google_cse").search(query, num=5) == hits[:5]
