"""The three wiki readers on one real MediaWiki 1.39 (loopback) holding the snapshot: ``dump``
(the XML export), ``api`` (live wikitext) and ``html`` (live pages rendered by MediaWiki's REST
API, Parsoid), and an Enterprise-style HTML dump made from that wiki's own rendered pages."""

from __future__ import annotations

import gzip
import json

import pytest

from builders.wikigen.records import Article
from builders.wikigen.select import classify
from pipelines.sources.wiki.api import read_api
from pipelines.sources.wiki.dump import read_dump
from pipelines.sources.wiki.enterprise import read_enterprise
from pipelines.sources.wiki.mediawiki_client import MediaWikiClient
from pipelines.sources.wiki.settings import ApiSettings, HtmlSettings, WikiSettings
from pipelines.stages.wiki import run_wiki
from tests.support.snapshot import SNAPSHOT_EVENTS, SNAPSHOT_XML

pytestmark = pytest.mark.integration


def _live(base: WikiSettings, url: str, reader: str) -> WikiSettings:
    api = ApiSettings(
        url=url,
        contact="https://benchsmith.example/contact",
        categories=["2025 labor disputes", "2026 labor disputes"],
        new_pages="recentchanges",
        request_interval_s=0,
        batch_size=7,
    )
    return base.model_copy(update={"reader": reader, "api": api})


def _enterprise_row(live: Article, html: str) -> dict:
    """An Enterprise HTML dump's line for a page the live html reader read."""
    return {
        "name": live.title,
        "identifier": live.page_id,
        "url": live.url,
        "namespace": {"identifier": live.namespace},
        "version": {"identifier": live.last_revision_id},
        "date_modified": live.last_revision_at.isoformat().replace("+00:00", "Z"),
        "article_body": {"html": html, "wikitext": ""},
    }


def _articles(results) -> dict[str, Article]:
    return {a.title: a for a in results if isinstance(a, Article)}


@pytest.fixture(scope="module")
def readers(wiki, params) -> tuple[WikiSettings, dict[str, dict[str, Article]]]:
    api = _live(params.wiki, wiki.api_url, "api")
    html = _live(params.wiki, wiki.api_url, "html")
    return api, {
        "dump": _articles(read_dump(SNAPSHOT_XML, skip_sections=api.skip_sections)),
        "api": _articles(read_api(MediaWikiClient(api.api), api)),
        "html": _articles(read_api(MediaWikiClient(html.api), html)),
    }


def test_the_three_readers_select_the_same_events(readers) -> None:
    settings, read = readers
    for name, articles in read.items():
        selected = {t for t, a in articles.items() if classify(a, settings) is None}
        assert selected == SNAPSHOT_EVENTS, name
    rendered = {a.reader for a in read["html"].values() if not a.is_redirect}
    assert rendered == {"html"}  # a redirect has no page of its own to render


def test_sections_references_and_lengths_agree(readers) -> None:
    _, read = readers
    gaps = []
    for title in sorted(SNAPSHOT_EVENTS):
        dump, api, html = (read[r][title] for r in ("dump", "api", "html"))
        outline = [(s.level, s.title) for s in dump.sections]
        assert [(s.level, s.title) for s in api.sections] == outline, title
        assert [(s.level, s.title) for s in html.sections] == outline, title
        urls = [r.url for r in dump.references]
        assert [r.url for r in api.references] == [r.url for r in html.references] == urls, title
        assert [link.url for link in html.external_links] == [
            link.url for link in dump.external_links
        ], title
        assert set(html.categories) == set(dump.categories), title
        assert html.infobox_type == dump.infobox_type, title
        gaps.append(abs(html.word_count - dump.word_count) / dump.word_count)
        assert gaps[-1] <= 0.02, (title, html.word_count, dump.word_count)
        assert not html.fidelity.suspect, (title, html.fidelity)


def test_the_html_reader_shows_what_mediawiki_renders(readers) -> None:
    """Where the readers differ, the html reader holds MediaWiki's own rendering: the snapshot's
    infobox template shows only some of its parameters, and its citation template its own
    punctuation; the wikitext path keeps every parameter and approximates the citation."""
    _, read = readers
    fewer = 0
    for title in sorted(SNAPSHOT_EVENTS):
        dump, html = read["dump"][title], read["html"][title]
        assert set(html.infobox) <= set(dump.infobox), title
        fewer += len(dump.infobox) - len(html.infobox)
        for ours, theirs in zip(dump.references, html.references, strict=True):
            # same words, MediaWiki's punctuation
            words = [set(r.cite_text.replace('"', "").split()) for r in (ours, theirs)]
            assert words[0] == words[1], title
    assert fewer > 0  # parameters the wiki does not show are not in the html records


def test_an_enterprise_html_dump_reads_as_the_live_html_reader(wiki, readers, tmp_path) -> None:
    settings, read = readers
    client = MediaWikiClient(settings.api)
    lines = []
    for title, live in read["html"].items():
        if live.is_redirect:
            continue
        lines.append(_enterprise_row(live, client.page_html(title)))
    lines.insert(3, {"name": "broken line"})  # a record without id or HTML
    dump = tmp_path / "enwiki-NS0-html.ndjson.gz"
    with gzip.open(dump, "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(line) + "\n" for line in lines)

    results = [r for r, _ in read_enterprise(dump, settings.rules())]
    articles = _articles(results)
    drops = [r for r in results if not isinstance(r, Article)]
    assert [(d.reason, "line 4" in d.detail) for d in drops] == [("undecodable", True)]
    assert set(articles) == {t for t, a in read["html"].items() if not a.is_redirect}
    for title, article in articles.items():
        live = read["html"][title]
        assert article.sections == live.sections and article.summary == live.summary, title
        assert article.references == live.references, title
        assert article.created_at is None  # Enterprise dumps carry no creation date


def test_the_stage_reads_an_enterprise_dump_and_dates_candidates_by_the_api(
    wiki, readers, params, tmp_path
) -> None:
    settings, read = readers
    client = MediaWikiClient(settings.api)
    dump = tmp_path / "enterprise.ndjson"
    with dump.open("w", encoding="utf-8") as out:
        for title in sorted(SNAPSHOT_EVENTS):
            row = _enterprise_row(read["html"][title], client.page_html(title))
            out.write(json.dumps(row) + "\n")
    html = HtmlSettings(source="enterprise", path=dump, creation_dates="api")
    stats = run_wiki(
        settings.model_copy(update={"reader": "html", "html": html}), out=tmp_path / "wiki"
    )
    assert stats.counts["selected"] == len(SNAPSHOT_EVENTS)
    assert stats.counts["created_at_looked_up"] == len(SNAPSHOT_EVENTS)
