"""How one copy of a grown world rewrites the snapshot's text: names, numbers, dates, sentence
order and URLs.

Copy 0 is the snapshot itself. Copy ``c`` > 0 gives every proper name of the snapshot's invented
world a new invented name (the same all through the copy, so an article and the pages it cites
still agree), scales every number of two or more digits by a seeded factor (years left alone),
moves every date by its event's shift, reorders the sentences after the first of any paragraph of
three or more, and moves every URL of the snapshot's hosts under ``/c<c>/`` with the names in its
path renamed. Every choice is seeded by the world's seed, the copy and the text it changes, so two
runs write the same bytes and a page duplicated under two URLs stays a duplicate.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from urllib.parse import urlsplit, urlunsplit

from pipelines.snapshot.wayback import ARCHIVE_HOST
from pipelines.sources.web.archives import memento_parts

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_M = "|".join(MONTHS)
_TOKEN = re.compile(
    r"(?P<url>https?://[^\s\"'<>|\[\]{}]+)"
    r"|(?P<rel>(?:(?<=href=\")|(?<=src=\"))/(?!/)[^\"]*)"
    rf"|(?P<drange>\b\d{{1,2}}[–-]\d{{1,2}} (?:{_M})(?: \d{{4}})?\b)"
    r"|(?P<iso>(?<!\d)\d{4}-\d\d-\d\d(?!\d))"
    rf"|(?P<dmy>\b\d{{1,2}} (?:{_M})(?: \d{{4}})?\b)"
    rf"|(?P<mdy>\b(?:{_M}) \d{{1,2}}(?:, \d{{4}})?\b)"
    rf"|(?P<my>\b(?:{_M}) \d{{4}}\b)"
    r"|(?P<num>(?<![\w.,/:#&=-])(?:\d{1,3}(?:,\d{3})+|\d{2,}(?:\.\d+)?|\d\.\d+)(?![\w/:=-]|[.,]\d))"
    r"|(?P<name>\b[A-Z][a-z]{2,}\b)"
)
_CAPITAL = re.compile(r"\b[A-Z][a-z]{2,}\b")
_LOWER = re.compile(r"\b[a-z]+\b")
_MARKUP = re.compile(r"https?://\S+|<[^>]*>")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")
_SLUG_WORD = re.compile(r"[a-z]+")
_ONSETS = ("b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br",
           "dr", "gr", "kr", "st", "tr", "sk")  # fmt: skip
_VOWELS = tuple("aeiouaeo")
_CODAS = ("", "", "", "n", "r", "l", "s", "nd", "rk")
_FACTORS = (0.75, 0.8, 0.9, 1.1, 1.2, 1.25, 1.5)


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def world_names(texts: Iterable[str], protected: Iterable[str], titles: Iterable[str]) -> set[str]:
    """The proper names of the snapshot's world: capitalised words that never appear in lower
    case and appear at least once inside a sentence, besides ``protected`` ones (markup, section
    and template names, months); every title without one gets its longest capitalised word, so
    each copy renames every page."""
    lower: set[str] = set()
    inner: Counter[str] = Counter()
    for text in texts:
        text = _MARKUP.sub(" ", text)
        lower.update(_LOWER.findall(text))
        for m in _CAPITAL.finditer(text):
            before = text[max(0, m.start() - 2) : m.start()]
            if len(before) == 2 and before[1] == " " and (before[0].islower() or before[0] in ",;"):
                inner[m[0]] += 1
    keep = {w.lower() for phrase in protected for w in phrase.split()}
    names = {w for w in inner if w.lower() not in lower and w.lower() not in keep}
    for title in titles:
        words = [w for w in _CAPITAL.findall(title) if w.lower() not in keep]
        if words and not names.intersection(words):
            names.add(max(words, key=len))
    return names


def invent_names(names: Iterable[str], seed: int, copy: int, taken: set[str]) -> dict[str, str]:
    """A new invented name for each of ``names`` in ``copy``, none in ``taken`` (which grows)."""
    out: dict[str, str] = {}
    for name in sorted(names):
        rng = _rng(seed, copy, name)
        syllables = max(2, min(4, round(len(name) / 3)))
        while True:
            word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables))
            word = (word + rng.choice(_CODAS)).capitalize()
            if word.lower() not in taken:
                break
            syllables = min(syllables + 1, 6)
        taken.add(word.lower())
        out[name] = word
    return out


def _scaled(number: str, seed: int, copy: int) -> str:
    digits = number.replace(",", "")
    if "." not in digits and len(digits) == 4 and 1800 <= int(digits) <= 2100:
        return number  # a year
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    value = float(digits)
    new = round(value * _rng(seed, copy, "n", number).choice(_FACTORS), decimals)
    if new == value:
        new = value + 1
    return f"{new:,.{decimals}f}" if "," in number else f"{new:.{decimals}f}"


def _date_text(kind: str, text: str, shift: timedelta, year_of: int) -> str:
    if kind == "iso":
        return (date.fromisoformat(text) + shift).isoformat()
    if kind == "drange":
        days, month, *year = text.split(" ")
        first, last = re.split("[–-]", days)
        start = _date_text("dmy", f"{first} {month} {' '.join(year)}".strip(), shift, year_of)
        end = _date_text("dmy", f"{last} {month} {' '.join(year)}".strip(), shift, year_of)
        a, b = start.split(" ", 1), end.split(" ", 1)
        return f"{a[0]}–{end}" if a[1:] == b[1:] else f"{start} – {end}"
    words = text.replace(",", "").split()
    if kind == "my":
        moved = date(int(words[1]), MONTHS.index(words[0]) + 1, 15) + shift
        return f"{MONTHS[moved.month - 1]} {moved.year}"
    day, month = (words[0], words[1]) if kind == "dmy" else (words[1], words[0])
    given = len(words) == 3
    try:
        moved = date(int(words[2]) if given else year_of, MONTHS.index(month) + 1, int(day)) + shift
    except ValueError:
        return text  # not a real date (31 February)
    name = MONTHS[moved.month - 1]
    if kind == "dmy":
        return f"{moved.day} {name}" + (f" {moved.year}" if given else "")
    return f"{name} {moved.day}" + (f", {moved.year}" if given else "")


@dataclass
class CopyRewrite:
    """The text rewriting of one copy of the world (copy 0 leaves everything as it is)."""

    copy: int
    seed: int
    names: dict[str, str]
    hosts: frozenset[str]
    slugs: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.slugs = {k.lower(): v.lower() for k, v in self.names.items()}

    def path(self, path: str) -> str:
        """A URL path of the snapshot's hosts in this copy: under ``/c<copy>``, names renamed."""
        if not self.copy:
            return path
        renamed = _SLUG_WORD.sub(lambda m: self.slugs.get(m[0], m[0]), path)
        return f"/c{self.copy}{renamed}"

    def url(self, url: str) -> str:
        """``url`` in this copy; URLs of other hosts are left alone, and a memento URL of the
        archive stand-in names its original's copy."""
        parts = urlsplit(url)
        if not self.copy or parts.hostname not in self.hosts:
            return url
        memento = memento_parts(url) if parts.hostname == ARCHIVE_HOST else None
        if memento is not None:
            return url[: len(url) - len(memento[2])] + self.url(memento[2])
        return urlunsplit(parts._replace(path=self.path(parts.path or "/")))

    def text(self, text: str, shift_days: int = 0, year: int = 2026) -> str:
        """``text`` (wikitext, HTML or plain) in this copy, its dates moved by ``shift_days``."""
        if not self.copy:
            return text
        text = self.reorder(text)
        shift = timedelta(days=shift_days)

        def one(m: re.Match[str]) -> str:
            kind, found = m.lastgroup or "", m[0]
            if kind == "url":
                core = found.rstrip(".,;:)")
                return self.url(core) + found[len(core) :]
            if kind == "rel":
                return self.path(found)
            if kind == "num":
                return _scaled(found, self.seed, self.copy)
            if kind == "name":
                return self.names.get(found, found)
            return _date_text(kind, found, shift, year)

        return _TOKEN.sub(one, text)

    def reorder(self, text: str) -> str:
        """Paragraphs of plain prose (a wikitext line, or an HTML ``<p>`` without markup) of three
        or more sentences, their sentences after the first in a seeded order."""

        def paragraph(body: str) -> str:
            if any(mark in body for mark in ("<", "{{", "[[File", "|", "\n")):
                return body
            parts = _SENTENCE_END.split(body)
            if len(parts) < 3:
                return body
            rest = parts[1:]
            _rng(self.seed, self.copy, "s", body).shuffle(rest)
            return " ".join([parts[0], *rest])

        text = re.sub(r"(?<=<p>)[^<]*(?=</p>)", lambda m: paragraph(m[0]), text)
        return re.sub(r"(?m)^[A-Z'][^\n]*$", lambda m: paragraph(m[0]), text)
