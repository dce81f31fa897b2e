"""The dump reader on real English Wikipedia: the shortened pages-articles dumps that gensim's
wheel ships for its own tests (106 articles and 99 redirects; five table-heavy pages; a Bulgarian
dump in UTF-16). The wheel is fetched from the package index into ``.cache/wheels`` at test time;
nothing of it is in the repository.

Every article is checked against its own source, with rules written here and not taken from
the reader: each heading of the wikitext is found, no wiki markup or empty brackets are left in
the text, and a page whose source cites URLs has references with URLs.
"""

from __future__ import annotations

import bz2
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from builders.drops import Drop
from builders.wikigen.records import Article
from builders.wikigen.select import check_content
from pipelines.errors import ParamsError
from pipelines.settings import Params
from pipelines.sources.wiki.dump import SiteInfo, _Page, iter_pages, read_dump
from pipelines.sources.wiki.fidelity_stats import count_fidelity
from pipelines.sources.wiki.multistream import StreamStats, candidate_pages, find_in_index
from pipelines.sources.wiki.reading import check_language, read_pages
from pipelines.sources.wiki.settings import WikiSettings
from pipelines.stats import StageStats
from tests.support.multistream import split_export, write_multistream
from tests.support.wheels import member

pytestmark = pytest.mark.integration

GENSIM = "gensim==4.4.0"
DATA = "gensim/test/test_data/"
ENWIKI = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
TABLES = "enwiki-table-markup.xml.bz2"
BGWIKI = "bgwiki-latest-pages-articles-shortened.xml.bz2"

_HIDDEN = re.compile(
    r"<!--.*?-->|<nowiki>.*?</nowiki>|<ref[^>]*/>|<ref[^>]*>.*?</ref>|<pre>.*?</pre>", re.S
)
_LEFT = ("{{", "}}", "[[", "]]", "<ref", "{|", "''")
_EMPTY = re.compile(r"\(\s*\)|\(\s*[,;]|[,;]\s*\)")
_MATH = re.compile(r"<math[^>]*>(.*?)</math>", re.S)
_CONVERT = re.compile(r"\{\{\s*(?:convert|cvt)\s*\|", re.I)


def _headings(wikitext: str) -> list[str]:
    """Heading titles of the source: lines between runs of ``=``, outside comments and refs."""
    lines = _HIDDEN.sub("", wikitext).splitlines()
    return [line.strip("= \t") for line in lines if re.fullmatch(r"(=+)[^=].*?=+\s*", line)]


@pytest.fixture(scope="module")
def enwiki() -> Path:
    return member(GENSIM, DATA + ENWIKI)


AT = datetime(2026, 11, 1, tzinfo=UTC)
"""One read time for reads that are compared."""


@pytest.fixture(scope="module")
def pages(enwiki: Path) -> list[tuple[SiteInfo, _Page]]:
    """Every ``(siteinfo, page)`` of the real dump, unparsed, in file order."""
    return list(iter_pages(enwiki))


@pytest.fixture(scope="module")
def staged(enwiki: Path) -> list[Article | Drop]:
    """The real dump read at :data:`AT` as the wiki stage reads it (cheap rules first): the
    module's one parse of its articles, which the fixtures below share."""
    return list(read_dump(enwiki, skip_sections=[], read_at=AT, cheap_rules_first=True))


@pytest.fixture(scope="module")
def full(
    enwiki: Path, pages: list[tuple[SiteInfo, _Page]], staged: list[Article | Drop]
) -> dict[str, Article]:
    """Every page of the real dump read whole at :data:`AT`, by title: the articles of the
    staged read, and the pages it dropped unparsed, parsed here alone."""
    dropped = {d.item_id for d in staged if isinstance(d, Drop)}
    rest = read_dump(
        enwiki,
        skip_sections=[],
        read_at=AT,
        pages=[(site, page) for site, page in pages if page.title in dropped],
    )
    return {a.title: a for a in [*staged, *rest] if isinstance(a, Article)}


@pytest.fixture(scope="module")
def real(
    pages: list[tuple[SiteInfo, _Page]], full: dict[str, Article]
) -> list[tuple[Article, str]]:
    """Every real article (no redirects) with its source wikitext, in file order."""
    read = [(full.get(page.title), page.text) for _, page in pages]
    return [(a, text) for a, text in read if a is not None and not a.is_redirect]


def test_the_dump_is_the_real_one(pages: list[tuple[SiteInfo, _Page]]) -> None:
    pages = [page for _, page in pages]
    assert len(pages) == 206
    assert {"Anarchism", "Albert Einstein", "Alabama", "Abraham Lincoln"} <= {
        p.title for p in pages
    }


def test_every_heading_of_every_article_is_found(real: list[tuple[Article, str]]) -> None:
    assert len(real) == 106
    wrong = {
        a.title: (len(_headings(src)), len(a.sections))
        for a, src in real
        if len(_headings(src)) != len(a.sections)
    }
    assert wrong == {}
    alabama = next(a for a, _ in real if a.title == "Alabama")
    assert len(alabama.sections) > 40


def _tex(wikitext: str) -> list[str]:
    """The TeX of the page's formulas, on one line each, as the text shows it on purpose."""
    return sorted({" ".join(m.split()) for m in _MATH.findall(wikitext)}, key=len, reverse=True)


def test_no_markup_or_empty_brackets_are_left_in_any_article(
    real: list[tuple[Article, str]],
) -> None:
    leftovers = {}
    for article, src in real:
        for text in [article.summary, *(s.text for s in article.sections)]:
            for tex in _tex(src):  # a formula's braces are TeX, not wiki markup
                text = text.replace(tex, "formula")
            found = [t for t in _LEFT if t in text] + _EMPTY.findall(text)
            if found:
                leftovers.setdefault(article.title, set()).update(found)
    assert leftovers == {}
    suspect = {a.title: a.fidelity.suspect for a, _ in real if a.fidelity.suspect}
    assert list(suspect) == ["Academy Award for Best Production Design"]
    assert suspect["Academy Award for Best Production Design"].startswith("mostly tables: 9")


def _texts(article: Article) -> str:
    return "\n".join([article.summary, *(s.text for s in article.sections)])


def test_every_conversion_prints_its_units_by_name_or_symbol(
    real: list[tuple[Article, str]],
) -> None:
    conversions = sum(len(_CONVERT.findall(src)) for _, src in real)
    assert sum(a.fidelity.tally.conversions for a, _ in real) == conversions == 436
    assert [u for a, _ in real for u in a.fidelity.tally.raw_units] == []
    every = "\n".join(_texts(a) for a, _ in real)
    assert "400,000 barrels per day" in every  # {{convert|400000|oilbbl/d|m3/d}}, Alaska
    assert "52,419 square miles" in every and "62,800 kilometres" in every
    # no unit code of the dump is left after a number: what the old rendering printed
    codes = r"oilbbl|sqmi|koilbbl/d|Moilbbl|e6acre|PD/sqmi|C-change|e6carat|Tcuft"
    assert re.findall(rf"\d (?:{codes})\b", every) == []


def test_formulas_ages_and_wrapped_templates_keep_their_words(
    real: list[tuple[Article, str]],
) -> None:
    by_title = {a.title: a for a, _ in real}
    apollo = by_title["Apollo 11"]
    assert apollo.last_revision_at is not None and apollo.last_revision_at.year == 2016
    assert "landed on July 20, 1969, at 20:18 UTC (46 years ago)." in apollo.summary
    assert "formula E = mc2 (which" in by_title["Albert Einstein"].summary
    ambiguity = _texts(by_title["Ambiguity"])
    assert "the expression\ns i n \\alpha\nmeans\nproduct of variables" in ambiguity
    assert "the expression\n\nmeans" not in ambiguity
    assert sum(a.fidelity.tally.math for a, _ in real) == 153


def test_references_with_urls_are_found_where_the_source_cites_urls(
    real: list[tuple[Article, str]],
) -> None:
    cites_urls = [a for a, src in real if re.search(r"<ref[^>/]*>[^<]*?https?://", src)]
    assert len(cites_urls) > 50
    assert [a.title for a in cites_urls if not any(r.url for r in a.references)] == []
    lincoln = next(a for a, _ in real if a.title == "Abraham Lincoln")
    assert lincoln.external_links


def test_inline_templates_that_carry_words_are_rendered(real: list[tuple[Article, str]]) -> None:
    by_title = {a.title: a for a, _ in real}
    assert "(1775–1783)" in by_title["American Revolutionary War"].summary
    assert by_title["Albania"].summary.startswith("Albania (Albanian: Shqipëri")
    assert by_title["Albert Einstein"].infobox["death_date"].startswith("18 April 1955 (aged 76)")
    every = "\n".join(t for a, _ in real for t in [a.summary, *(s.text for s in a.sections)])
    years = r"(?:1[5-9]\d\d|20[0-2]\d)"
    assert not re.findall(rf"\b{years}{years}\b", every)  # no year ranges run together
    assert every.count(" ;") + every.count(" ,") == 0


def test_table_heavy_pages_keep_their_prose_and_no_table_markup() -> None:
    articles = [
        a
        for a in read_dump(member(GENSIM, DATA + TABLES), skip_sections=[])
        if isinstance(a, Article)
    ]
    assert len(articles) == 5
    for article in articles:
        text = "\n".join([article.summary, *(s.text for s in article.sections)])
        assert "{|" not in text and "|}" not in text and "||" not in text, article.title
        assert article.word_count > 0


def test_the_mostly_table_page_is_suspect_and_named_in_the_stats() -> None:
    stats, extra = StageStats("wiki"), {}
    articles = [
        a
        for a in read_dump(member(GENSIM, DATA + TABLES), skip_sections=[])
        if isinstance(a, Article)
    ]
    for article in articles:
        count_fidelity(stats, article, extra)
    assert stats.counts["mostly_tables_pages"] == stats.counts["suspect_pages"] == 1
    assert stats.counts["table_words"] > 5000
    (named,) = extra["suspect_pages"]
    assert named["title"] == "Academy Award for Best Production Design"
    assert re.fullmatch(
        r"mostly tables: 97% of its words \([\d,]+ of [\d,]+\) are in .*", named["why"]
    )


def test_the_mostly_table_page_keeps_its_words_with_tables_rendered_as_text() -> None:
    read = read_dump(member(GENSIM, DATA + TABLES), skip_sections=[], tables_as_text=True)
    articles = {a.title: a for a in read if isinstance(a, Article)}
    awards = articles["Academy Award for Best Production Design"]
    assert awards.word_count > 4000 and not awards.fidelity.suspect
    assert all(a.fidelity.tally.table_words == 0 for a in articles.values())
    text = _texts(awards)
    assert "{|" not in text and "|}" not in text and "||" not in text
    assert "\nYear | Interior decorator | Film\n" in text  # a row a line, cells joined
    assert "\nWilliam Cameron Menzies | The Dove\n" in text


def test_a_utf16_dump_in_another_language_is_read() -> None:
    articles = [
        a
        for a in read_dump(member(GENSIM, DATA + BGWIKI), skip_sections=[])
        if isinstance(a, Article)
    ]
    assert len(articles) == 3
    assert articles[0].title == "Григориански календар"
    assert "календар" in articles[0].summary and not articles[0].fidelity.suspect


def _bulgarian(params, **wiki: object) -> Params:
    dump = {**params.wiki.dump.model_dump(), "path": member(GENSIM, DATA + BGWIKI)}
    settings = {**params.wiki.model_dump(), "dump": dump, **wiki}
    return params.model_copy(update={"wiki": WikiSettings.model_validate(settings)})


def test_the_bulgarian_dump_read_as_english_is_refused_naming_the_keys_to_set(params) -> None:
    settings = _bulgarian(params).wiki
    with pytest.raises(ParamsError) as refused:
        check_language(settings)
    message = str(refused.value)
    assert "is a 'bg' wiki" in message and "wiki.language is 'en'" in message
    assert "Set wiki.language: bg, wiki.skip_sections and wiki.external_links_section" in message
    with pytest.raises(ParamsError, match="is a 'bg' wiki"):
        read_pages(settings, {})


def test_the_bulgarian_dump_with_its_language_and_two_keys_reads_its_external_links(
    params,
) -> None:
    settings = _bulgarian(
        params,
        language="bg",
        skip_sections=["Вижте също", "Външни препратки", "Източници"],
        external_links_section="Външни препратки",
    ).wiki
    check_language(settings)  # no complaint
    pages, _ = read_pages(settings, {})
    calendar = next(p for p in pages if isinstance(p, Article) and p.namespace == 0)
    assert calendar.title == "Григориански календар"
    assert calendar.outline == ["Описание", "Григорианската промяна", "Хронологична схема"]
    assert len(calendar.external_links) == 5
    assert all(link.url.startswith("http") for link in calendar.external_links)
    assert not calendar.fidelity.suspect


def test_the_real_dump_repacked_as_multistream_reads_its_candidates_alone(
    enwiki: Path, full: dict[str, Article], tmp_path: Path
) -> None:
    plain = tmp_path / "enwiki.xml"
    plain.write_bytes(bz2.decompress(enwiki.read_bytes()))
    header, pages = split_export(plain)
    dump, index = tmp_path / "multistream.xml.bz2", tmp_path / "index.txt.bz2"
    streams = write_multistream(header, pages, dump, index)
    titles = ["Anarchism", "Albert Einstein", "Alabama", "Abraham Lincoln", "Aristotle"]
    lookup = find_in_index(index, [*titles, "Not in this dump"])
    stats = StreamStats()
    found = read_dump(
        dump, skip_sections=[], read_at=AT, pages=candidate_pages(dump, lookup, stats)
    )
    assert {a.title: a.to_row() for a in found} == {t: full[t].to_row() for t in titles}
    assert lookup.missing == ["Not in this dump"]
    assert stats.pages_read == len(titles)
    assert stats.streams_read == len(lookup.streams) < streams


def test_redirects_and_non_articles_of_the_real_dump_are_dropped_unparsed_as_the_rules_would(
    pages: list[tuple[SiteInfo, _Page]],
    staged: list[Article | Drop],
    full: dict[str, Article],
    params,
) -> None:
    unparsed = [d for d in staged if isinstance(d, Drop)]
    assert len(unparsed) >= 99  # the dump's 99 redirects at least
    for drop in unparsed:
        rejection = check_content(full[drop.item_id], params.wiki)
        assert rejection is not None
        assert (drop.reason, drop.detail) == (rejection.reason, rejection.detail)
    kept = [a.title for a in staged if isinstance(a, Article)]
    titles = [page.title for _, page in pages]
    assert len(set(titles)) == len(titles) == len(staged)  # one record a page
    assert set(kept) == set(titles) - {d.item_id for d in unparsed}
