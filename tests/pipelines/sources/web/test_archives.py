"""Archived copies of lost human-editor links, against the snapshot's archive stand-in on
127.0.0.1 speaking the Wayback Machine's availability JSON and serving raw mementos: recovered
from the citation's archive-url and by a lookup aimed at the access date; another URL's copy, a
redirect loop, a 5xx, a malformed answer and a robots.txt disallow are no copy; a replay
without network gives the same documents."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import anyio
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders.wikigen.records import ARTICLE_SCHEMA, ExternalLink, Reference
from pipelines.snapshot.site_server import serve_site
from pipelines.snapshot.tls import make_certificates
from pipelines.snapshot.wayback import ARCHIVE_HOST
from pipelines.sources.web.archives import (
    ArchiveAnswerError,
    Wanted,
    citation_date,
    closest_snapshot,
    lookup_url,
    memento_parts,
    raw_memento,
    recover_all,
)
from pipelines.sources.web.fetch import Fetcher
from pipelines.sources.web.settings import ArchiveSettings, FetchSettings, WebSettings
from pipelines.sources.web.warc_archive import MEMENTO_TYPE
from pipelines.stages.web import run_web
from tests.support.network import loopback_fetch
from tests.support.records import make_article

API = f"https://{ARCHIVE_HOST}/wayback/available"
NEWS = "https://news.example"
WORDS = "The river crossed the levee at dawn and the town council opened two shelters. " * 8


def _page(marker: str) -> str:
    return f"<html><head><title>{marker}</title></head><body><article><h1>{marker}</h1>" + (
        f"<p>{marker}. {WORDS}</p></article></body></html>"
    )


def _write(folder: Path, relative: str, text: str) -> None:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _world(tmp: Path) -> tuple[Path, Path, dict[str, dict]]:
    site, wayback = tmp / "site", tmp / "wayback"
    _write(site, "news.example/alive.html", _page("Alive page"))
    copies = {
        "20260305000000/news.example/gone-cited.html": "Cited copy",
        "20260101000000/news.example/gone-looked-up.html": "January copy",
        "20260307120000/news.example/gone-looked-up.html": "March copy",
        "20260901000000/news.example/gone-looked-up.html": "September copy",
        "20260301000000/news.example/gone-redirected.html": "Redirected copy",
        "20260301000000/other.example/elsewhere.html": "Another page",
        "20260301000000/news.example/gone-looping.html": "Looping copy",
        "20260301000000/news.example/gone-broken.html": "Broken copy",
    }
    for relative, marker in copies.items():
        _write(wayback, relative, _page(marker))
    memento = f"https://{ARCHIVE_HOST}/web/20260301000000id_"
    on_day = date(2026, 3, 1)  # the event's date: these citations carry no access-date
    traps = {
        lookup_url(API, f"{NEWS}/gone-elsewhere", on_day): {
            "body": json.dumps(
                {
                    "archived_snapshots": {
                        "closest": {
                            "available": True,
                            "url": f"https://{ARCHIVE_HOST}/web/20260301000000/"
                            "https://other.example/elsewhere",
                            "timestamp": "20260301000000",
                            "status": "200",
                        }
                    }
                }
            ),
            "content_type": "application/json",
        },
        f"{memento}/{NEWS}/gone-redirected": {
            "location": f"{memento}/https://other.example/elsewhere"
        },
        f"{memento}/{NEWS}/gone-looping": {"location": f"{memento}/{NEWS}/gone-looping"},
        f"{memento}/{NEWS}/gone-broken": {"status": 503},
        lookup_url(API, f"{NEWS}/gone-malformed", on_day): {
            "body": '{"archived_snapshots": {"closest": ',
            "content_type": "application/json",
        },
    }
    return site, wayback, traps


def _fetch_settings(port: int, ca: Path) -> FetchSettings:
    return loopback_fetch(f"127.0.0.1:{port}", retries=1, ca_file=str(ca))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, no_network_module):
    """The web stage live against the stand-in, then replayed with no network at all."""
    tmp = tmp_path_factory.mktemp("archives")
    site, wayback, traps = _world(tmp)
    ca, cert, key = make_certificates(tmp / "tls", ["news.example", "other.example", ARCHIVE_HOST])
    cited = Reference(
        "cited",
        "Cited",
        f"{NEWS}/gone-cited",
        archive_url=f"https://{ARCHIVE_HOST}/web/20260305000000/{NEWS}/gone-cited",
        archive_date="5 March 2026",
    )
    looked_up = Reference(
        "looked", "Looked up", f"{NEWS}/gone-looked-up", access_date="6 March 2026"
    )
    others = ["alive", "gone-elsewhere", "gone-redirected", "gone-looping", "gone-broken"]
    article = make_article(
        references=[cited, looked_up, *(Reference(n, n, f"{NEWS}/{n}") for n in others)],
        external_links=[ExternalLink(f"{NEWS}/gone-malformed", "Malformed lookup")],
    )
    articles = tmp / "articles.parquet"
    pq.write_table(pa.Table.from_pylist([article.to_row()], schema=ARTICLE_SCHEMA), articles)
    with serve_site(site, traps, cert, key, wayback) as server:
        live = WebSettings(
            mode="live",
            archive=tmp / "archive",
            search_log=tmp / "search.jsonl",
            fetch=_fetch_settings(server.server_address[1], ca),
            archives=ArchiveSettings(wayback_api=API),
        )
        stats = run_web(live, articles=articles, out=tmp / "live")
        asked = list(server.requests)
    live.search_log.touch()  # no search provider: no query was logged
    with no_network_module():
        replayed = run_web(
            live.model_copy(update={"mode": "replay"}), articles=articles, out=tmp / "replay"
        )
    return tmp, stats, replayed, asked


def _documents(folder: Path) -> dict[str, dict]:
    rows = pq.read_table(folder / "documents.parquet").to_pylist()
    return {row["url"].rsplit("/", 1)[1]: row for row in rows}


def test_a_lost_link_is_recovered_from_its_citations_archive_url(runs):
    tmp, _, _, asked = runs
    doc = _documents(tmp / "live")["gone-cited"]
    assert (doc["status"], doc["archived"], doc["archive"]) == ("ok", True, "citation")
    assert "Cited copy" in doc["text"]
    assert doc["memento_at"] == datetime(2026, 3, 5, tzinfo=UTC)
    assert doc["final_url"] == f"https://{ARCHIVE_HOST}/web/20260305000000id_/{NEWS}/gone-cited"
    assert "citation copy of a link that ended dead (HTTP 404)" in doc["reason"]
    assert not any("gone-cited" in u and "/wayback/available" in u for u in asked)
    assert _documents(tmp / "live")["alive"]["archived"] is False


def test_a_lookup_takes_the_copy_closest_to_the_access_date(runs):
    tmp, _, _, asked = runs
    doc = _documents(tmp / "live")["gone-looked-up"]
    assert (doc["status"], doc["archive"]) == ("ok", "wayback")
    assert "March copy" in doc["text"] and "January" not in doc["text"]
    assert doc["memento_at"] == datetime(2026, 3, 7, 12, tzinfo=UTC)
    assert lookup_url(API, f"{NEWS}/gone-looked-up", date(2026, 3, 6)).split("/", 3)[3] in [
        u.split("/", 3)[3] for u in asked
    ]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("gone-elsewhere", "is a copy of another URL"),
        ("gone-redirected", "is a copy of another URL, https://other.example/elsewhere"),
        ("gone-looping", "ended error (redirect loop"),
        ("gone-broken", "ended error (HTTP 503"),
        ("gone-malformed", "malformed availability JSON from https://web.archive.example/"),
    ],
)
def test_another_urls_copy_a_loop_a_5xx_or_bad_json_is_no_copy(runs, name, why):
    tmp, *_ = runs
    doc = _documents(tmp / "live")[name]
    assert (doc["status"], doc["archived"], doc["text"]) == ("dead", False, "")
    assert doc["reason"].startswith("HTTP 404; no archived copy: wayback: ")
    assert why in doc["reason"]
    assert "Another page" not in doc["text"]


def test_stats_count_lost_links_tried_and_recovered_per_archive(runs):
    _, stats, replayed, _ = runs
    expected = {
        "archive_lost": 7,
        "archive_recovered": 2,
        "archive_citation_tried": 1,
        "archive_citation_recovered": 1,
        "archive_wayback_tried": 6,
        "archive_wayback_recovered": 1,
    }
    assert {k: stats.counts.get(k) for k in expected} == expected
    assert {k: replayed.counts.get(k) for k in expected} == expected


def test_replay_without_network_gives_the_same_documents(runs):
    tmp, *_ = runs
    live = pq.read_table(tmp / "live" / "documents.parquet").drop(["fetched_at"])
    replay = pq.read_table(tmp / "replay" / "documents.parquet").drop(["fetched_at"])
    assert replay.equals(live)


def test_each_copy_is_archived_under_its_memento_url_linked_to_its_original(runs):
    from warcio.archiveiterator import ArchiveIterator

    tmp, *_ = runs
    links = {}
    for path in sorted((tmp / "archive").glob("*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.content_type == MEMENTO_TYPE:
                    target = record.rec_headers.get_header("WARC-Target-URI")
                    links[target] = json.loads(record.content_stream().read())
                    original = record.rec_headers.get_header("WARC-Refers-To-Target-URI")
                    assert original == links[target]["original_url"]
    looked = f"https://{ARCHIVE_HOST}/web/20260307120000id_/{NEWS}/gone-looked-up"
    assert links[looked] == {
        "archive": "wayback",
        "memento_at": "2026-03-07T12:00:00+00:00",
        "original_url": f"{NEWS}/gone-looked-up",
    }
    assert len(links) == 2


def test_robots_txt_of_the_archive_host_is_honoured(tmp_path):
    site, wayback, _ = _world(tmp_path)
    _write(site, f"{ARCHIVE_HOST}/robots.txt", "User-agent: *\nDisallow: /web/\n")
    ca, cert, key = make_certificates(tmp_path / "tls", ["news.example", ARCHIVE_HOST])
    wanted = Wanted(f"{NEWS}/gone-looked-up", aim=date(2026, 3, 6))

    async def look(port: int) -> dict:
        async with Fetcher(_fetch_settings(port, ca)) as fetcher:
            return await recover_all(fetcher, ArchiveSettings(wayback_api=API), [wanted])

    with serve_site(site, {}, cert, key, wayback) as server:
        recovery = anyio.run(look, server.server_address[1])[wanted]
        asked = list(server.requests)
    assert recovery.copy is None and recovery.tried == ("wayback",)
    assert "ended robots (robots.txt disallows" in recovery.note()
    assert not any("/web/" in u for u in asked)  # the lookup is allowed, the copy never asked


def test_wayback_memento_urls_parse_and_take_their_raw_form():
    url = "http://web.archive.org/web/20130919044612/http://example.com/"
    assert memento_parts(url) == ("http://web.archive.org", "20130919044612", "http://example.com/")
    assert raw_memento(url) == "http://web.archive.org/web/20130919044612id_/http://example.com/"
    assert raw_memento("https://archive.ph/AbCd1") == "https://archive.ph/AbCd1"


def test_availability_answers_parse_as_documented():
    none = closest_snapshot('{"archived_snapshots": {}}', API)
    assert none is None
    found = closest_snapshot(
        '{"archived_snapshots": {"closest": {"available": true, "status": "200", '
        '"url": "http://web.archive.org/web/20130919044612/http://example.com/", '
        '"timestamp": "20130919044612"}}}',
        API,
    )
    assert found == (
        "http://web.archive.org/web/20130919044612/http://example.com/",
        "20130919044612",
    )
    for bad in ("[]", "{}", '{"archived_snapshots": {"closest": {}}}', "<html>"):
        with pytest.raises(ArchiveAnswerError, match=r"web\.archive\.example"):
            closest_snapshot(bad, API)


def test_citation_dates_read_as_editors_write_them():
    for text in ("6 March 2026", "March 6, 2026", "2026-03-06", "6 Mar 2026"):
        assert citation_date(text) == date(2026, 3, 6)
    assert citation_date("sometime in spring") is None


def test_a_live_run_refuses_the_snapshots_stand_in_archive():
    from pydantic import ValidationError

    from pipelines.sources.web.settings import WebSettings

    given = {"mode": "live", "archive": "a", "search_log": "s.jsonl",
             "archives": {"wayback_api": "https://web.archive.example/wayback/available"}}  # fmt: skip
    with pytest.raises(ValidationError, match=r"set it to https://archive\.org/wayback/available"):
        WebSettings(**given)
    mapped = {**given, "fetch": {"resolve": {"*.archive.example": "127.0.0.1"}}}
    assert WebSettings(**mapped).archives.wayback_api.startswith("https://web.archive.example")
    assert WebSettings(**{**given, "mode": "replay"}).mode == "replay"
    assert WebSettings(**{**given, "archives": {**given["archives"], "order": ["citation"]}})
