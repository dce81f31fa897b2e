"""The api reader against a real MediaWiki 1.39 loaded from the snapshot export."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode
from urllib.request import Request, urlopen

import pyarrow.parquet as pq
import pytest

from builders.wikigen.select import classify
from pipelines.sources.wiki.api import discover_titles, read_api
from pipelines.sources.wiki.dump import read_dump
from pipelines.sources.wiki.mediawiki_client import MediaWikiClient
from pipelines.sources.wiki.settings import ApiSettings, DumpSettings, WikiSettings
from pipelines.stages.wiki import run_wiki
from tests.support.snapshot import SNAPSHOT_EVENTS, SNAPSHOT_TRAPS, SNAPSHOT_XML

pytestmark = pytest.mark.integration


def _api_settings(base: WikiSettings, url: str) -> WikiSettings:
    api = ApiSettings(
        url=url,
        contact="https://benchsmith.example/contact",
        categories=["2025 labor disputes", "2026 labor disputes"],
        new_pages="recentchanges",  # importDump writes no creation log; see the logevents test
        request_interval_s=0,
        batch_size=7,
    )
    return base.model_copy(update={"reader": "api", "api": api})


@pytest.fixture(scope="module")
def both_readers(wiki, params):
    settings = _api_settings(params.wiki, wiki.api_url)
    api = {a.title: a for a in read_api(MediaWikiClient(settings.api), settings)}
    dump = {a.title: a for a in read_dump(SNAPSHOT_XML, skip_sections=settings.skip_sections)}
    return settings, api, dump


def test_api_and_dump_select_the_same_events(both_readers):
    settings, api, dump = both_readers
    api_selected = {t for t, a in api.items() if classify(a, settings) is None}
    dump_selected = {t for t, a in dump.items() if classify(a, settings) is None}
    assert api_selected == dump_selected == SNAPSHOT_EVENTS


def test_api_records_agree_with_dump_records(both_readers):
    _, api, dump = both_readers
    for title in SNAPSHOT_EVENTS:
        a, d = api[title], dump[title]
        assert [(s.level, s.title) for s in a.sections] == [
            (s.level, s.title) for s in d.sections
        ], title
        assert set(a.categories) == set(d.categories), title
        assert [r.url for r in a.references] == [r.url for r in d.references], title
        assert a.created_at == d.created_at, title
        assert abs(a.word_count - d.word_count) <= 0.02 * d.word_count, title
        assert a.infobox_type == d.infobox_type and a.infobox == d.infobox, title
        assert a.reader == "api" and d.reader == "dump"
        assert a.url.startswith("http://127.0.0.1:")


def test_outline_matches_mediawiki_own_section_list(wiki, both_readers):
    """Section titles and levels agree with MediaWiki's parser, not only with our own."""
    settings, api, _ = both_readers
    client = MediaWikiClient(settings.api)
    skip = {s.casefold() for s in settings.skip_sections}
    for title in sorted(SNAPSHOT_EVENTS):
        answer = client.request({"action": "parse", "page": title, "prop": "sections"})
        theirs = [
            (int(s["level"]), s["line"])
            for s in answer["parse"]["sections"]
            if s["line"].casefold() not in skip
        ]
        assert [(s.level, s.title) for s in api[title].sections] == theirs, title


def test_api_reader_rejects_the_traps_it_discovers_for_the_same_reasons(both_readers):
    settings, api, _ = both_readers
    discovered = {t: r for t, r in SNAPSHOT_TRAPS.items() if t in api}
    # new pages in the window plus the labor-dispute categories reach every main-namespace trap
    assert set(discovered) == {t for t in SNAPSHOT_TRAPS if not t.startswith("Template:")}
    for title, reason in discovered.items():
        assert classify(api[title], settings).reason == reason, title


def test_mediawiki_renders_every_cited_url_as_an_external_link(wiki, both_readers):
    settings, api, _ = both_readers
    client = MediaWikiClient(settings.api)
    for title in sorted(SNAPSHOT_EVENTS)[:4]:
        block = next(client.query({"prop": "extlinks", "titles": title, "ellimit": "max"}))
        rendered = {link["url"] for link in block["pages"][0].get("extlinks", [])}
        cited = {r.url for r in api[title].references if r.url}
        linked = {link.url for link in api[title].external_links}
        assert cited | linked <= rendered, title


def test_parser_word_counts_match_mediawiki_plain_text(wiki, both_readers):
    """Our wikitext-to-text agrees with MediaWiki's own rendering (TextExtracts) within 2%."""
    from mediawiki import MediaWiki

    _, api, _ = both_readers
    site = MediaWiki(url=wiki.api_url, user_agent="benchsmith-tests")
    for title in sorted(SNAPSHOT_EVENTS):
        content = site.page(title, auto_suggest=False).content
        prose = "\n".join(
            line for line in content.splitlines() if not re.match(r"^=+ .* =+$", line.strip())
        )
        ours = api[title].word_count
        theirs = len(prose.split())
        assert abs(ours - theirs) <= 0.02 * theirs, (title, ours, theirs)


def _latest_revisions_only(source: Path, target: Path) -> None:
    """Write a pages-articles style export: only each page's last revision."""
    text = source.read_text("utf-8")

    def keep_last(match: re.Match[str]) -> str:
        page = match.group(0)
        revisions = re.findall(r"    <revision>.*?</revision>\n", page, flags=re.S)
        for revision in revisions[:-1]:
            page = page.replace(revision, "", 1)
        return page

    target.write_text(re.sub(r"  <page>.*?</page>\n", keep_last, text, flags=re.S), "utf-8")


def test_dump_without_history_asks_the_api_about_candidates_only(wiki, params, tmp_path):
    latest = tmp_path / "pages-articles.xml"
    _latest_revisions_only(SNAPSHOT_XML, latest)
    settings = _api_settings(params.wiki, wiki.api_url).model_copy(
        update={
            "reader": "dump",
            "dump": DumpSettings(path=latest, creation_dates="api"),
        }
    )
    stats = run_wiki(settings, out=tmp_path / "wiki")
    titles = set(pq.read_table(tmp_path / "wiki" / "articles.parquet").column("title").to_pylist())
    assert titles == SNAPSHOT_EVENTS
    rejected = pq.read_table(tmp_path / "wiki" / "drops.parquet").to_pylist()
    reasons = {r["item_id"]: r["reason"] for r in rejected}
    assert reasons["2026 Korvenna tramway strike"] == "created_before_window"
    # only pages that passed every content rule were looked up: the events and the two old ones
    assert stats.counts["created_at_looked_up"] == len(SNAPSHOT_EVENTS) + 2


def _create_page(api_url: str, title: str, text: str) -> None:
    """Create a page as an anonymous editor through the real API (this writes a creation log)."""
    token = json.load(urlopen(f"{api_url}?action=query&meta=tokens&format=json"))
    body = urlencode(
        {
            "action": "edit",
            "title": title,
            "text": text,
            "createonly": 1,
            "format": "json",
            "token": token["query"]["tokens"]["csrftoken"],
        }
    ).encode()
    answer = json.load(urlopen(Request(api_url, data=body)))
    assert answer.get("edit", {}).get("result") == "Success", answer


def test_new_pages_come_from_the_creation_log(wiki, params):
    _create_page(wiki.api_url, "2026 Lissen hailstorm", "A hailstorm struck [[Lissen]].")
    settings = _api_settings(params.wiki, wiki.api_url)
    today = datetime.now(UTC).date()
    settings = settings.model_copy(
        update={
            "api": settings.api.model_copy(update={"categories": [], "new_pages": "logevents"}),
            "created_after": today - timedelta(days=1),
            "created_before": today + timedelta(days=1),
        }
    )
    client = MediaWikiClient(settings.api)
    titles = discover_titles(client, settings, "Category")
    # imported pages have no creation-log entries; the page created just now does
    assert titles == ["2026 Lissen hailstorm"]
    article = next(read_api(client, settings))
    assert article.title == "2026 Lissen hailstorm"
    assert classify(article, settings).reason == "not_event"
