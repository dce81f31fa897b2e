"""The web stage in live mode against a local server: a rate-limited document is fetched again
by the next run, a fetched one is not."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builders.wikigen.records import ARTICLE_SCHEMA, DOCUMENT_STATUSES, ExternalLink
from pipelines.sources.web.fetch import STATUSES
from pipelines.sources.web.settings import FetchSettings, WebSettings
from pipelines.stages.web import run_web
from tests.support.fault_server import fault_server
from tests.support.records import make_article


def _settings(tmp: Path) -> WebSettings:
    fetch = FetchSettings(
        contact="ops@benchsmith.example",
        per_host_delay_s=0,
        read_timeout_s=2.0,
        total_timeout_s=4.0,
        retries=2,
        backoff_s=0.01,
        allow_addresses=["127.0.0.1/32"],
        resolve={"*.example": "127.0.0.1"},
    )
    return WebSettings(
        mode="live", archive=tmp / "archive", search_log=tmp / "search.jsonl", fetch=fetch
    )


def _documents(out: Path) -> dict[str, dict]:
    rows = pq.read_table(out / "documents.parquet").to_pylist()
    return {row["url"].rsplit("/", 1)[1]: row for row in rows}


def test_rate_limited_documents_are_fetched_again_by_the_next_run(tmp_path):
    with fault_server() as server:
        base = f"http://news.example:{server.server_address[1]}"
        article = make_article(
            external_links=[
                ExternalLink(f"{base}/rate-limited-once", "Asks for a day's wait, once"),
                ExternalLink(f"{base}/article", "Answers at once"),
            ]
        )
        articles = tmp_path / "articles.parquet"
        pq.write_table(pa.Table.from_pylist([article.to_row()], schema=ARTICLE_SCHEMA), articles)
        settings = _settings(tmp_path)

        first = run_web(settings, articles=articles, out=tmp_path / "first")
        before = _documents(tmp_path / "first")
        second = run_web(settings, articles=articles, out=tmp_path / "second")
        after = _documents(tmp_path / "second")
        paths = [p for p, _ in server.requests]

    limited = before["rate-limited-once"]
    assert (limited["status"], limited["http_status"]) == ("rate_limited", 429)
    assert "86400" in limited["reason"]
    assert first.dropped["rate_limited"] == 1 and first.counts["human_rate_limited"] == 1
    assert before["article"]["status"] == "ok"

    assert (after["rate-limited-once"]["status"], after["rate-limited-once"]["http_status"]) == (
        "ok",
        200,
    )
    assert "flood water rose" in after["rate-limited-once"]["text"]
    assert "rate_limited" not in second.dropped
    assert after["article"]["status"] == "ok"
    assert after["article"]["text"] == before["article"]["text"]
    # the rate-limited page was asked twice (once per run); the fetched one only once
    assert paths.count("/rate-limited-once") == 2
    assert paths.count("/article") == 1


def test_rate_limited_is_a_document_and_a_fetch_status():
    assert "rate_limited" in DOCUMENT_STATUSES
    assert set(STATUSES) <= set(DOCUMENT_STATUSES)


def test_an_event_without_candidates_is_counted_and_the_other_keeps_its_documents(tmp_path):
    from pipelines.stages.web import summary

    with fault_server() as server:
        base = f"http://news.example:{server.server_address[1]}"
        linked = make_article(external_links=[ExternalLink(f"{base}/article", "Answers at once")])
        bare = make_article(page_id=2, title="2026 Unlinked floods", url="https://wiki.example/u")
        settings = _settings(tmp_path)
        outs = {}
        for name, events in (("alone", [linked]), ("beside", [linked, bare])):
            articles = tmp_path / f"{name}.parquet"
            rows = [a.to_row() for a in events]
            pq.write_table(pa.Table.from_pylist(rows, schema=ARTICLE_SCHEMA), articles)
            outs[name] = run_web(settings, articles=articles, out=tmp_path / name)

    alone, beside = _documents(tmp_path / "alone"), _documents(tmp_path / "beside")
    assert beside.keys() == alone.keys() == {"article"}
    assert beside["article"]["status"] == "ok" and beside["article"]["text"]
    assert beside["article"]["text"] == alone["article"]["text"]
    assert outs["beside"].counts["events"] == 2
    assert outs["beside"].counts["events_without_documents"] == 1
    assert "events_without_documents" not in outs["alone"].counts
    line = summary(outs["beside"], tmp_path / "beside")
    assert "for 2 events (1 without a usable document), 1 ok" in line
