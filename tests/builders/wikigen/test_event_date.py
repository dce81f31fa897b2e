"""The event date read from an infobox: the snapshot's 13 events, the real English Wikipedia dump
that gensim's wheel ships (rendered values and the raw wikitext with its date templates), the
documented date templates, and the value forms infoboxes use."""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta
from pathlib import Path

import mwparserfromhell
import pytest

from builders.wikigen.event_date import EVENT_DATE_KEYS, event_date, parse_date
from builders.wikigen.records import Article
from pipelines.sources.wiki.dump import iter_pages, read_dump
from tests.support.snapshot import SNAPSHOT_EVENTS, SNAPSHOT_XML
from tests.support.wheels import member

_MONTH_NAME = re.compile("|".join(calendar.month_name[1:]))


def _key(name: str) -> str:
    return re.sub(r"[\s_-]+", "", name).lower()


_EVENT_KEYS = {_key(k) for k in EVENT_DATE_KEYS}


# --- the snapshot ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def snapshot() -> dict[str, Article]:
    """Every page of the snapshot export, read by the project's dump reader."""
    return {a.title: a for a in read_dump(SNAPSHOT_XML) if isinstance(a, Article)}


def _written_start(value: str) -> date:
    """The start of a day-first date or range as the snapshot writes it, read another way: the
    first number is the day, the first month name the month, the last four digits the year."""
    day = int(re.search(r"\d+", value).group())
    month = list(calendar.month_name).index(_MONTH_NAME.search(value).group())
    year = int(re.findall(r"\b\d{4}\b", value)[-1])
    return date(year, month, day)


def test_each_snapshot_event_starts_on_the_first_day_its_infobox_gives(
    snapshot: dict[str, Article],
) -> None:
    events = {title: snapshot[title] for title in SNAPSHOT_EVENTS}
    assert len(events) == 13
    for title, article in events.items():
        start = event_date(article.infobox)
        assert start == _written_start(article.infobox["date"]).isoformat(), title
        assert date(2025, 12, 1) <= date.fromisoformat(start) <= date(2026, 12, 31), title


def test_snapshot_events_start_no_later_than_the_day_after_their_page_is_written(
    snapshot: dict[str, Article],
) -> None:
    # Events are written up once they start; a tournament's page goes up before kick-off.
    early = {}
    for title in SNAPSHOT_EVENTS:
        article = snapshot[title]
        start = date.fromisoformat(event_date(article.infobox))
        if start > article.created_at.date() + timedelta(days=1):
            early[title] = (start - article.created_at.date()).days
    assert early == {"2026 Korvenna Cup": 3}


def test_snapshot_pages_that_are_no_event_have_no_event_date(
    snapshot: dict[str, Article],
) -> None:
    # a biography (term_start, birth_date), a film (released), a list and a disambiguation page
    for title in [
        "Mira Castellane",
        "The Glass Harbour",
        "List of floods in Valdra",
        "Lantern Tide",
    ]:
        assert event_date(snapshot[title].infobox) is None, title
    assert event_date(snapshot["2025 Meridal dock strike"].infobox) == "2025-09-15"
    assert event_date(snapshot["2026 Brannock dockworkers' strike"].infobox) == "2026-02-09"


# --- real English Wikipedia --------------------------------------------------------------------

GENSIM = "gensim==4.4.0"
ENWIKI = (
    "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)


def _infobox_source(text: str) -> str:
    """The wikitext of the page's first ``{{Infobox ...}}`` call ('' when it has none): parsing
    that alone is much quicker than parsing the page."""
    start = text.lower().find("{{infobox")
    if start < 0:
        return ""
    depth = 0
    for match in re.finditer(r"\{\{|\}\}", text[start:]):
        depth += 1 if match.group() == "{{" else -1
        if depth == 0:
            return text[start : start + match.end()]
    return ""


@pytest.fixture(scope="module")
def real() -> list[tuple[Article, dict[str, str]]]:
    """Every real article (no redirects) whose wikitext names an infobox, with its infobox's
    parameters as wikitext. The 160 pages that never write "infobox" (60 articles, 100
    redirects) can have no infobox template, so no value any test reads: the project's reader
    renders only the 46 others (4.6 s instead of 8)."""
    enwiki: Path = member(GENSIM, ENWIKI)
    pages = [p for p in iter_pages(enwiki) if "infobox" in p[1].text.lower()]
    sources = {page.title: page.text for _, page in pages}
    read = read_dump(enwiki, skip_sections=[], creation_dates="api", pages=pages)
    out = []
    for article in (a for a in read if isinstance(a, Article) and not a.is_redirect):
        boxes = mwparserfromhell.parse(_infobox_source(sources[article.title])).filter_templates()
        raw = {str(p.name).strip(): str(p.value).strip() for p in boxes[0].params} if boxes else {}
        out.append((article, raw))
    return out


@pytest.mark.integration
def test_real_event_dates_are_the_starts_of_the_war_and_the_launches(
    real: list[tuple[Article, dict[str, str]]],
) -> None:
    # 3 values under the event keys in the 106 articles (date: 1, launch_date: 2); all 3 parse.
    values = [v for a, _ in real for k, v in a.infobox.items() if _key(k) in _EVENT_KEYS]
    parsed = [parse_date(v) for v in values]
    assert (len(values), sum(p is not None for p in parsed)) == (3, 3), values
    found = {a.title: event_date(a.infobox) for a, _ in real if event_date(a.infobox)}
    assert found == {
        "American Revolutionary War": "1775-04-19",  # "April 19, 1775 - September 3, 1783; ..."
        "Apollo 11": "1969-07-16",  # "July 16, 1969, 13:32:00 UTC"
        "Apollo 8": "1968-12-21",
    }
    assert [t for a, raw in real if (t := a.title) in found and event_date(raw) != found[t]] == []


def _date_values(real: list[tuple[Article, dict[str, str]]]) -> list[str]:
    """Every rendered infobox value whose key names a date (birth, death, established, ...)."""
    return [v for a, _ in real for k, v in a.infobox.items() if "date" in k.lower()]


@pytest.mark.integration
def test_real_date_values_give_a_date_written_in_the_value(
    real: list[tuple[Article, dict[str, str]]],
) -> None:
    # 57 values under keys naming a date; 54 parse: the rest are two BC years and a date_format.
    values = _date_values(real)
    results = [(v, parse_date(v)) for v in values]
    parsed = sum(r is not None for _, r in results)
    assert (len(values), parsed) == (57, 54), f"{len(values)} date values, {parsed} parse"
    checked = 0
    for value, got in results:
        years = [y for y in re.findall(r"(?<!\d)\d{4}(?!\d)", value) if 1000 <= int(y) <= 2030]
        if not years:
            continue
        assert got is not None, value
        assert got[:4] in years, value
        if _MONTH_NAME.search(value):
            checked += 1
            assert len(got) >= 7 and calendar.month_name[int(got[5:7])] in value, value
            if len(got) == 10:
                assert re.search(rf"(?<!\d)0?{int(got[8:])}(?!\d)", value), value
        else:
            assert got == years[0], value
    assert checked == 48  # the other 6 give a year only (1278, 1986, ...)


@pytest.mark.integration
def test_real_infobox_wikitext_with_its_date_templates_gives_the_rendered_dates(
    real: list[tuple[Article, dict[str, str]]],
) -> None:
    # {{birth date|1809|2|12}}, {{death date and age|df=yes|...}}, {{start-date|July 16, 1969,
    # 13:32:00|timezone=yes}}&nbsp;UTC, {{snds}} between the dates of a range, refs, links, <br>
    pairs = [
        (raw[k], v)
        for a, raw in real
        for k, v in a.infobox.items()
        if "date" in k.lower() and k in raw
    ]
    assert len(pairs) == 57
    assert sum("{{" in r for r, _ in pairs) >= 25
    assert [(r, v) for r, v in pairs if parse_date(r) != parse_date(v)] == []


@pytest.mark.integration
def test_no_value_of_any_real_infobox_raises(real: list[tuple[Article, dict[str, str]]]) -> None:
    values = [v for a, raw in real for v in [*a.infobox.values(), *raw.values()]]
    assert len(values) > 2000
    assert all(
        parse_date(v) is None or re.fullmatch(r"\d{4}(-\d\d){0,2}", parse_date(v)) for v in values
    )
    for article, raw in real:
        event_date(raw)
        event_date(article.infobox)


# --- documented template syntaxes --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{{Start date|2026|3|14}}", "2026-03-14"),
        ("{{start date|2026|03|14|df=y}}", "2026-03-14"),
        ("{{Start date|df=yes|2026|3|14}}", "2026-03-14"),
        ("{{start date|1969|7|16|13|32|00|Z}}", "1969-07-16"),
        ("{{start date|2024|6}}", "2024-06"),
        ("{{start date|2024}}", "2024"),
        ("{{Start date and age|2024|03|14|df=y}}", "2024-03-14"),
        ("{{start date and age|2024|3|14|mf=yes}}", "2024-03-14"),
        ("{{Start-date|March 14, 2024}}", "2024-03-14"),
        ("{{Start and end dates|2024|3|14|2024|3|16}}", "2024-03-14"),
        ("{{dts|2024|3|14}}", "2024-03-14"),
        ("{{dts|2024|March|14}}", "2024-03-14"),
        ("{{dts|format=dmy|2024|Mar|14}}", "2024-03-14"),
        ("{{dts|14 March 2024}}", "2024-03-14"),
        ("{{dts|March 14, 2024}}", "2024-03-14"),
        ("{{dts|2024-03-14}}", "2024-03-14"),
        ("{{dts|-300}}", None),
        ("{{date|2024-03-14}}", "2024-03-14"),
        ("{{date|14 March 2024|mdy}}", "2024-03-14"),
        ("{{date}}", None),
        ("14{{ndash}}22 January 2026", "2026-01-14"),
        ("9 July{{snd}}24 August 2026", "2026-07-09"),
        ("{{nowrap|12 April 2026}}", "2026-04-12"),
        ("{{circa|1990}}", "1990"),
        ("{{c.|1990}}", "1990"),
        ("{{plainlist|\n* 12 April 2026\n* 14 April 2026}}", "2026-04-12"),
        ("{{Start date|2026|3|14}}{{efn|Local time.}}", "2026-03-14"),
        (
            "12 April 2026<ref>{{cite web|url=https://x.example|date=1 May 2025}}</ref>",
            "2026-04-12",
        ),
        ("12 April 2026<ref name=a/>", "2026-04-12"),
        ("<!-- 1 May 2025 -->12 April 2026", "2026-04-12"),
        ("[[12 April]] [[2026]]", "2026-04-12"),
        ("[[2026 in Valdra|2026]]", "2026"),
        ("12&nbsp;April&nbsp;2026", "2026-04-12"),
        ("'''12 April 2026'''<br />(UTC)", "2026-04-12"),
    ],
)
def test_date_templates(value: str, expected: str | None) -> None:
    assert parse_date(value) == expected
    assert event_date({"date": value}) == expected


# --- value forms -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("14–22 January 2026", "2026-01-14"),
        ("9 July – 24 August 2026", "2026-07-09"),
        ("3–19 March 2026", "2026-03-03"),
        ("12 April 2026", "2026-04-12"),
        ("March 14, 2024", "2024-03-14"),
        ("March 14–16, 2024", "2024-03-14"),
        ("March 30 – April 2, 2024", "2024-03-30"),
        ("2024-03-14", "2024-03-14"),
        ("2024 March 14", "2024-03-14"),
        ("14 March 2024 – present", "2024-03-14"),
        ("28 December 2025 – 3 January 2026", "2025-12-28"),
        ("June 2024", "2024-06"),
        ("June–July 2024", "2024-06"),
        ("December 2025 – January 2026", "2025-12"),
        ("2024", "2024"),
        ("c. 1990", "1990"),
        ("2025–26", "2025"),
        ("12 April 2026[1]", "2026-04-12"),
        ("12 April 2026[a][citation needed]", "2026-04-12"),
        ("12 April 2026 (UTC)", "2026-04-12"),
        ("12 April 2026, 05:04 local time", "2026-04-12"),
        ("05:04 local time, 12 April 2026", "2026-04-12"),
        ("Sunday, 12 April 2026", "2026-04-12"),
        ("14-22 January 2026", "2026-01-14"),
        ("14—22 January 2026", "2026-01-14"),
        ("14 to 22 January 2026", "2026-01-14"),
        ("between 2 and 5 March 2024", "2024-03-02"),
        ("night of 14/15 April 2024", "2024-04-14"),
        ("March 14 through 16, 2024", "2024-03-14"),
        ("1st March 2024", "2024-03-01"),
        ("the 1st of March, 2024", "2024-03-01"),
        ("March 22nd, 2024", "2024-03-22"),
        ("3rd–5th May 2024", "2024-05-03"),
        ("Jan. 5, 2024", "2024-01-05"),
        ("5 Sept 2024", "2024-09-05"),
        ("Sept. 5, 2024", "2024-09-05"),
        ("5 SEP 2024", "2024-09-05"),
        ("July 16, 1969, 13:32:00 UTC", "1969-07-16"),
        ("31 April 2026", "2026-04"),  # no such day: the month is still known
        ("14 March", None),  # no year
        ("384 BC", None),
        ("1990s", None),
        ("3/14/2024", None),  # all-numeric: ambiguous
        ("present", None),
        ("TBA", None),
        ("06:47 VST", None),
        ("", None),
        ("{{", None),
        ("[[", None),
        ("<ref>", None),
    ],
)
def test_value_forms(value: str, expected: str | None) -> None:
    assert parse_date(value) == expected


# --- keys --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("infobox", "expected"),
    [
        ({"name": "X", "date": "12 April 2026", "time": "05:04"}, "2026-04-12"),
        ({"time": "12 April 2026"}, None),
        ({"end_date": "12 April 2026"}, None),
        ({"birth_date": "12 April 1979", "term_start": "28 May 2026"}, None),
        ({"released": "24 April 2026"}, None),
        ({"Date": "12 April 2026"}, "2026-04-12"),
        ({"start date": "12 April 2026"}, "2026-04-12"),
        ({"start-date": "12 April 2026"}, "2026-04-12"),
        ({"dates": "4–19 July 2026"}, "2026-07-04"),
        ({"election_date": "17 May 2026"}, "2026-05-17"),
        ({"launch_date": "July 16, 1969, 13:32:00 UTC"}, "1969-07-16"),
        ({"formed": "14 January 2026", "dissipated": "22 January 2026"}, "2026-01-14"),
        ({"date": "TBA", "start_date": "3 March 2026"}, "2026-03-03"),
        ({"start_date": "3 March 2026", "date": "4 March 2026"}, "2026-03-04"),
        ({"date": "June 2024", "start_date": "14 June 2024"}, "2024-06-14"),
        ({"date": "2024", "dates": "June 2024"}, "2024-06"),
        ({"date": "2024", "start_date": "14 June 2025"}, "2024"),
        ({}, None),
    ],
)
def test_keys(infobox: dict[str, str], expected: str | None) -> None:
    assert event_date(infobox) == expected


def test_months_after_counts_calendar_months_and_keeps_to_the_months_last_day():
    from datetime import date

    from builders.wikigen.event_date import months_after

    assert months_after(date(2026, 11, 27), -6) == date(2026, 5, 27)
    assert months_after(date(2026, 3, 31), -1) == date(2026, 2, 28)
    assert months_after(date(2024, 2, 29), -12) == date(2023, 2, 28)
    assert months_after(date(2026, 1, 31), 13) == date(2027, 2, 28)
