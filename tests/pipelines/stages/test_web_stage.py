"""The web stage in live mode against a local server: a rate-limited document is fetched again
by the next run, a fetched one is not; binary, oversized and disguised-loopback documents keep
their status, live and replayed."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builders.wikigen.records import ARTICLE_SCHEMA, DOCUMENT_STATUSES, ExternalLink
from pipelines.sources.web.fetch import STATUSES
from pipelines.sources.web.settings import WebSettings
from pipelines.stages.web import run_web
from tests.support.fault_server import fault_server
from tests.support.network import loopback_fetch
from tests.support.records import make_article


def _settings(tmp: Path, **fetch_overrides) -> WebSettings:
    fetch = loopback_fetch(**fetch_overrides)
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


def test_binary_oversized_and_disguised_loopback_documents_settle_live_and_replayed(
    tmp_path, no_network
):
    with fault_server() as server:
        port = server.server_address[1]
        base = f"http://news.example:{port}"
        links = [f"{base}/png-as-html", f"{base}/endless", f"http://0177.0.0.2:{port}/article"]
        article = make_article(
            external_links=[ExternalLink(url, "") for url in [*links, f"{base}/article"]]
        )
        articles = tmp_path / "articles.parquet"
        pq.write_table(pa.Table.from_pylist([article.to_row()], schema=ARTICLE_SCHEMA), articles)
        live = _settings(tmp_path, max_bytes=200_000)
        stats = run_web(live, articles=articles, out=tmp_path / "live")
        paths = [p for p, _ in server.requests]
    expected = {
        "png-as-html": "binary",
        "endless": "too_large",
        "article": "ok",
    }
    documents = pq.read_table(tmp_path / "live" / "documents.parquet").to_pylist()
    by_url = {d["url"]: d for d in documents}
    assert by_url[links[2]]["status"] == "blocked_address"
    assert "resolves to 127.0.0.2" in by_url[links[2]]["reason"]
    assert {u.rsplit("/", 1)[1]: d["status"] for u, d in by_url.items() if base in u} == expected
    assert "PNG image" in by_url[links[0]]["reason"] and not by_url[links[0]]["text"]
    assert stats.dropped["binary"] == 1 and paths.count("/article") == 1

    replay = live.model_copy(update={"mode": "replay"})
    live.search_log.touch()  # no search provider: no query was logged
    with no_network():
        run_web(replay, articles=articles, out=tmp_path / "replayed")
        tight = replay.model_copy(
            update={"fetch": live.fetch.model_copy(update={"max_bytes": 500})}
        )
        run_web(tight, articles=articles, out=tmp_path / "tight")
    replayed = pq.read_table(tmp_path / "replayed" / "documents.parquet").to_pylist()
    assert [(d["url"], d["status"], d["text"]) for d in replayed] == [
        (d["url"], d["status"], d["text"]) for d in documents
    ]
    capped = {
        d["url"]: d for d in pq.read_table(tmp_path / "tight" / "documents.parquet").to_pylist()
    }
    assert capped[f"{base}/article"]["status"] == "too_large"  # replay under the cap it is given


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
