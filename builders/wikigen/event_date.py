"""The date an event began, read from its Wikipedia infobox.

A small regex parser over the stdlib: builders import nothing of ``pipelines``, and
``dateutil``'s fuzzy parse reads a range such as "14-22 January 2026" as its last day. The first
date expression of a value wins: a range gives its first day, "14 March 2024 - present" its start,
a value with notes after it ("12 April 2026[1]", ", 05:04 local time", "(UTC)") its date.

Results are ISO 8601 at the precision the value gives: ``2024-03-14``; ``2024-06`` when only the
month and year are known ("June 2024", ``{{start date|2024|6}}``); ``2024`` when only the year
is ("2024", "c. 1990"). A value with no year ("14 March"), a BC year, a decade ("1990s") or an
all-numeric date other than ``YYYY-MM-DD`` ("3/14/2024" is ambiguous) gives nothing.

Understood: day-first and month-first dates ("14 March 2024", "March 14, 2024", "2024 March 14",
"1st of March 2024"), full and abbreviated month names ("Jan.", "Sept"), ordinal days, ranges
joined by a hyphen, an en or em dash, "to", "until", "through", "and" or "/" ("3-19 March 2026",
"9 July - 24 August 2026", "March 14-16, 2024", "March 30 - April 2, 2024", "June-July 2024"),
ISO dates, and in values that still hold wikitext: refs, comments, links, HTML and the date
templates ``{{start date}}``, ``{{start date and age}}``, ``{{start and end dates}}``,
``{{end date}}``, ``{{dts}}``, ``{{date}}`` (and the birth and death date ones), the dash
templates (``{{ndash}}``) and wrappers (``{{nowrap}}``, ``{{circa}}``); other templates are
dropped.
"""

from __future__ import annotations

import calendar
import html
import re
from collections.abc import Callable, Mapping
from datetime import date

EVENT_DATE_KEYS: tuple[str, ...] = (
    "date",
    "start_date",
    "date_start",
    "start",
    "dates",
    "event_date",
    "first_date",
    "begin_date",
    "election_date",
    "launch_date",
    "formed",
    "opening",
    "local_date",
    "utc_date",
)
"""Infobox keys read for the start date, most preferred first: ``date`` (event, disaster,
earthquake, flood, wildfire, weather event, aircraft occurrence, rail accident, civil and
military conflict, protest, sports event), the explicit start keys, ``dates`` (tournaments,
festivals, multi-day sports events), ``election_date`` (Infobox election), ``launch_date``
(spaceflights), ``formed`` (tropical cyclones), ``opening`` (multi-sport games) and the
earthquake's ``local_date``/``utc_date``. Keys match ignoring case and ``_``/``-``/spaces.
``time`` (the time of day), ``end_date`` and dates of people or places are never read."""

_MONTHS = (
    "jan(?:uary|\\.)?",
    "feb(?:ruary|\\.)?",
    "mar(?:ch|\\.)?",
    "apr(?:il|\\.)?",
    "may",
    "june?\\.?",
    "july?\\.?",
    "aug(?:ust|\\.)?",
    "sep(?:tember|t\\.?|\\.)?",
    "oct(?:ober|\\.)?",
    "nov(?:ember|\\.)?",
    "dec(?:ember|\\.)?",
)
_MONTH_NUMBER = {name[:3]: n for n, name in enumerate(_MONTHS, start=1)}
_MONTH_NAMES = (
    *("January", "February", "March", "April", "May", "June", "July", "August", "September"),
    *("October", "November", "December"),
)

_M = r"(?<![a-z])(?:" + "|".join(_MONTHS) + r")(?![a-z])"
_D = r"(?<![\w.,:])[0-3]?\d(?:st|nd|rd|th)?(?!\w)"
_Y = r"(?<![\w.,:/])\d{3,4}(?!\w|[:.,]\d|\s*(?:BCE?|B\.C\.)(?!\w))"
_TO = r"\s*(?:[-–—‒―−‐‑/]|\s(?:to|until|till|through|thru|and|&)\s)\s*"
_OF = r"\s+(?:of\s+)?"

Parts = tuple[int, int | None, int | None]
"""Year, month and day (month and day may be unknown)."""


def _num(text: str) -> int:
    return int(re.sub(r"\D", "", text))


def _month(text: str) -> int:
    return _MONTH_NUMBER[text[:3].lower()]


def _full(m: re.Match[str]) -> Parts:
    return _num(m["y"]), _month(m["m"]), _num(m["d"])


def _month_year(m: re.Match[str]) -> Parts:
    return _num(m["y"]), _month(m["m"]), None


def _iso(m: re.Match[str]) -> Parts:
    return int(m["y"]), int(m["m"]), int(m["d"])


def _year(m: re.Match[str]) -> Parts:
    return _num(m["y"]), None, None


_PATTERNS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], Parts]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), read)
    for pattern, read in (
        # 14-22 January 2026
        (rf"(?P<d>{_D}){_TO}{_D}\s+(?P<m>{_M}),?\s+(?P<y>{_Y})", _full),
        # 9 July - 24 August 2026
        (rf"(?P<d>{_D}){_OF}(?P<m>{_M}){_TO}{_D}\s+{_M},?\s+(?P<y>{_Y})", _full),
        # 14 March 2024, 1st of March 2024
        (rf"(?P<d>{_D}){_OF}(?P<m>{_M}),?\s+(?P<y>{_Y})", _full),
        # March 14-16, 2024
        (rf"(?P<m>{_M})\s+(?P<d>{_D}){_TO}{_D},?\s+(?P<y>{_Y})", _full),
        # March 30 - April 2, 2024
        (rf"(?P<m>{_M})\s+(?P<d>{_D}){_TO}{_M}\s+{_D},?\s+(?P<y>{_Y})", _full),
        # March 14, 2024
        (rf"(?P<m>{_M})\s+(?P<d>{_D}),?\s+(?P<y>{_Y})", _full),
        # 2024 March 14
        (rf"(?P<y>{_Y}),?\s+(?P<m>{_M})\s+(?P<d>{_D})", _full),
        # 2024-03-14
        (r"(?<!\d)(?P<y>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)(?!\d)", _iso),
        # June-July 2024
        (rf"(?P<m>{_M}){_TO}{_M},?\s+(?P<y>{_Y})", _month_year),
        # June 2024
        (rf"(?P<m>{_M}),?\s+(?P<y>{_Y})", _month_year),
        # 2024, c. 1990
        (rf"(?P<y>{_Y})", _year),
    )
)
"""Date expressions, tried at every position; the first position wins, then the finer date."""

_DATE_TEMPLATES = frozenset(
    {
        "start date",
        "start-date",
        "start date and age",
        "start and end dates",
        "end date",
        "end-date",
        "end date and age",
        "dts",
        "date",
        "birth date",
        "birth date and age",
        "death date",
        "death date and age",
        "film date",
    }
)
_DASH_TEMPLATES = frozenset(
    {"ndash", "en dash", "endash", "mdash", "em dash", "emdash", "mdashb", "dash", "snd", "snds"}
    | {"spnd", "sndash", "spaced ndash", "spaced en dash", "spaced mdash", "spmdash"}
)
_WRAPPERS = frozenset({"nowrap", "nobr", "no wrap", "avoid wrap", "small", "abbr"})
_LISTS = frozenset({"plainlist", "plain list", "ubl", "unbulleted list", "hlist", "flatlist"})
_CIRCA = frozenset({"circa", "c.", "ca.", "c"})

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_REF = re.compile(r"<ref\b[^>]*/>|<ref\b[^>]*>.*?(?:</ref\s*>|$)", re.S | re.I)
_TEMPLATE = re.compile(r"\{\{([^{}]*)\}\}")
_LINK = re.compile(r"\[\[([^\[\]{}]*)\]\]")
_EXTERNAL = re.compile(r"\[(?:https?:)?//\S+\s*([^\[\]]*)\]")
_TAG = re.compile(r"<[^<>]*>")
_NOTE = re.compile(r"\[[^\[\]]{0,40}\]")
_SPACE = re.compile(r"[\s\u00a0\u2009\u202f]+")
_LIMIT = 2000
"""Characters of a cleaned value that are searched: a start date comes first."""


def _template(body: str) -> str:
    """Plain text for one template call without nested templates; a space for the templates
    that carry no date (footnotes, flags), so the words either side stay apart."""
    name, *args = (part.strip() for part in body.split("|"))
    name = _SPACE.sub(" ", name.replace("_", " ")).strip().lower()
    positional = [a for a in args if "=" not in a]
    if name in _DATE_TEMPLATES:
        return _template_date(positional)
    if name in _DASH_TEMPLATES:
        return " – "
    if name in _WRAPPERS:
        return positional[0] if positional else ""
    if name in _LISTS:
        return "; ".join(a for a in positional if a)
    if name in _CIRCA:
        return f"c. {positional[0]}" if positional else ""
    return " "


def _template_date(args: list[str]) -> str:
    """``{{start date|2026|3|14}}`` -> ``14 March 2026`` (``{{dts|2024|Mar|14}}`` alike); text
    arguments (``{{dts|14 March 2024}}``, ``{{date|2024-03-14|dmy}}``) are joined as they are."""
    parts = [a for a in args if a][:3]
    if not parts or parts[0].startswith("-"):
        return ""
    if not re.fullmatch(r"\d{3,4}", parts[0]):
        return " ".join(parts)
    year, month, day = (*parts, "", "")[:3]
    if month.isdigit():
        month = _MONTH_NAMES[int(month) - 1] if 1 <= int(month) <= 12 else ""
    return " ".join(p for p in (day if month else "", month, year) if p)


def _plain(value: str) -> str:
    """The value with wikitext, HTML, footnote markers and odd spaces taken out."""
    text = _COMMENT.sub(" ", html.unescape(value))
    text = _REF.sub(" ", text)
    text = _LINK.sub(lambda m: m[1].rsplit("|", 1)[-1], text)
    for _ in range(20):
        text, found = _TEMPLATE.subn(lambda m: _template(m[1]), text)
        if not found:
            break
    text = _LINK.sub(lambda m: m[1].rsplit("|", 1)[-1], text)
    text = _EXTERNAL.sub(lambda m: m[1], text)
    text = _TAG.sub(" ", text.replace("{{", " ").replace("}}", " "))
    text = _NOTE.sub(" ", text).replace("'''", "").replace("''", "")
    return _SPACE.sub(" ", text).strip()[:_LIMIT]


def _iso_text(parts: Parts) -> str | None:
    """``parts`` as ISO 8601 at their precision, or None when they are no calendar date."""
    year, month, day = parts
    try:
        date(year, month or 1, day or 1)
    except ValueError:
        return None
    if month is None:
        return f"{year:04d}"
    return f"{year:04d}-{month:02d}" if day is None else f"{year:04d}-{month:02d}-{day:02d}"


def parse_date(value: str) -> str | None:
    """The first date of an infobox value as ISO 8601 (``YYYY-MM-DD``, ``YYYY-MM`` or
    ``YYYY``), or None when it holds none."""
    if not isinstance(value, str):
        return None
    text = _plain(value)
    best: tuple[int, int, str] | None = None
    for pattern, read in _PATTERNS:
        for match in pattern.finditer(text):
            if best is not None and match.start() > best[0]:
                break
            found = _iso_text(read(match))
            if found is not None:
                candidate = (match.start(), -len(found), found)
                best = candidate if best is None else min(best, candidate)
                break
    return best[2] if best else None


def _key(name: str) -> str:
    return re.sub(r"[\s_-]+", "", name).lower()


def event_date(infobox: Mapping[str, str]) -> str | None:
    """The date the event began, from the first key of :data:`EVENT_DATE_KEYS` whose value
    parses (:func:`parse_date`); a later key refines a month or year it agrees with
    (``date = June 2024``, ``start_date = 14 June 2024`` -> ``2024-06-14``). None when no key
    gives a date."""
    by_key = {_key(k): v for k, v in infobox.items() if isinstance(k, str)}
    found: str | None = None
    for key in EVENT_DATE_KEYS:
        value = by_key.get(_key(key))
        parsed = parse_date(value) if value else None
        if parsed is None:
            continue
        if found is None or (len(parsed) > len(found) and parsed.startswith(found + "-")):
            found = parsed
        if len(found) == len("YYYY-MM-DD"):
            break
    return found


def months_after(start: date, months: int) -> date:
    """The day ``months`` calendar months after ``start`` (before it when negative), on the
    month's last day when ``start``'s day is past it (31 March less one month: 28 February)."""
    year, month = divmod(start.year * 12 + start.month - 1 + months, 12)
    return date(year, month + 1, min(start.day, calendar.monthrange(year, month + 1)[1]))
