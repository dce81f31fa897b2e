"""Plain-text renderings of the inline templates that carry words in prose and infoboxes.

Every other template is dropped from plain text. The set was chosen by counting template uses in
the prose and infoboxes of real English Wikipedia articles (the shortened dump gensim ships for
its tests, 106 articles): measurements (``{{convert}}`` 436 uses, ``{{val}}``, ``{{frac}}``),
languages (``{{lang}}`` 224, ``{{lang-xx}}``, ``{{langx}}``, ``{{transl}}``, ``{{nihongo}}``),
wrappers (``{{small}}``, ``{{nowrap}}``, ``{{flag}}``), punctuation and spaces (``{{ndash}}``,
``{{·}}``, ``{{'s}}``, ``{{nbsp}}``), chemistry (``{{chem}}``), quotations (``{{quote}}``), dates
(``{{Start date}}``, ``{{Death date and age}}``), lists in infoboxes and money. Pronunciation
templates (``{{IPAc-en}}``, ``{{IPA}}``, ``{{respell}}``, ``{{audio}}``) are dropped, and the
renderer of the page removes the brackets and separators they leave behind. ``{{convert}}``
has its own module (:mod:`pipelines.sources.wiki.convert`); ages (``{{age}}``...) count to a date
the caller gives (:data:`DATED`). The templates of that dump used 10 times or more and still
dropped, on purpose, are named in the sources page of the documentation (hatnotes, short
citations, maintenance tags, pronunciations, layout, icons and charts, ``{{coord}}``,
``{{inflation}}``).
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from datetime import date
from functools import lru_cache, partial

from babel import Locale

from builders.wikigen.event_date import months_after
from pipelines.sources.wiki import convert

Renderer = Callable[[list[str], dict[str, str]], str]
DatedRenderer = Callable[[list[str], dict[str, str], date | None], str]


def _first(args: list[str], named: dict[str, str]) -> str:
    return args[0] if args else ""


def _second(args: list[str], named: dict[str, str]) -> str:
    return args[1] if len(args) > 1 else ""


def _last(args: list[str], named: dict[str, str]) -> str:
    return args[-1] if args else ""


def _joined(args: list[str], named: dict[str, str]) -> str:
    return "".join(args)


def _text(args: list[str], named: dict[str, str]) -> str:
    return named.get("text") or named.get("quote") or (args[0] if args else "")


def _parts(args: list[str]) -> list[int] | None:
    parts = [a.strip() for a in args[:3] if a.strip()]
    return [int(p) for p in parts] if parts and all(p.isdigit() for p in parts) else None


def _date_of(parts: list[int]) -> str:
    year, *rest = parts
    if not rest:
        return str(year)
    month = calendar.month_name[rest[0]] if 1 <= rest[0] <= 12 else str(rest[0])
    return f"{month} {year}" if len(rest) == 1 else f"{rest[1]} {month} {year}"


def _date(args: list[str], named: dict[str, str]) -> str:
    parts = _parts(args)
    return _date_of(parts) if parts else (args[0] if args else "")


def _date_and_age(args: list[str], named: dict[str, str]) -> str:
    """``{{Death date and age|1955|4|18|1879|3|14}}``: the first date, and the age at it when
    the second date is given in full (a birth date's age depends on the day of reading)."""
    first, second = _parts(args[:3]), _parts(args[3:6])
    if not first:
        return args[0] if args else ""
    if second and len(first) == len(second) == 3:
        age = first[0] - second[0] - ((first[1], first[2]) < (second[1], second[2]))
        return f"{_date_of(first)} (aged {age})"
    return _date_of(first)


def _years(since: list[int], until: tuple[int, int, int]) -> int:
    """Whole years from the date ``since`` (year, month, day) to ``until``."""
    year, month, day = [*since, 1, 1][:3]
    return until[0] - year - ((until[1], until[2]) < (month, day))


def _until(args: list[str], as_of: date | None) -> tuple[int, int, int] | None:
    """The second date of a dated template (arguments 4 to 6), else ``as_of``."""
    until = _parts(args[3:6])
    if until and len(until) == 3:
        return until[0], until[1], until[2]
    return (as_of.year, as_of.month, as_of.day) if as_of else None


def _age(args: list[str], named: dict[str, str], as_of: date | None) -> str:
    """``{{age|1969|07|20}}`` -> whole years to ``as_of`` (or to the second date given)."""
    since, until = _parts(args[:3]), _until(args, as_of)
    return str(_years(since, until)) if since and until else ""


def _age_ymd(args: list[str], named: dict[str, str], as_of: date | None) -> str:
    """``{{age in years, months and days|1775|04|19|1783|09|03}}`` -> ``8 years, 4 months and
    15 days`` (to ``as_of`` when the second date is missing)."""
    since, until = _parts(args[:3]), _until(args, as_of)
    try:
        start, end = date(*since), date(*until)  # type: ignore[misc]
    except (TypeError, ValueError):  # fewer than three parts, or no such day
        return _age(args, named, as_of)
    months = (end.year - start.year) * 12 + end.month - start.month - (end.day < start.day)
    days = (end - months_after(start, months)).days
    parts = [(months // 12, "year"), (months % 12, "month"), (days, "day")]
    shown = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in parts]
    return f"{shown[0]}, {shown[1]} and {shown[2]}"


def _date_and_age_ago(args: list[str], named: dict[str, str], as_of: date | None) -> str:
    """``{{start date and age|1929|5|16}}`` -> ``16 May 1929; 88 years ago`` (in brackets
    with ``paren=yes``)."""
    parts = _parts(args)
    if not parts or not as_of:
        return _date(args, named)
    ago = f"{_years(parts, (as_of.year, as_of.month, as_of.day))} years ago"
    paren = named.get("paren", "").strip().lower() in ("yes", "y", "on")
    return f"{_date_of(parts)} ({ago})" if paren else f"{_date_of(parts)}; {ago}"


def _birth_date_and_age(args: list[str], named: dict[str, str], as_of: date | None) -> str:
    """``{{birth date and age|1970|04|29}}`` -> ``29 April 1970 (age 47)``."""
    parts = _parts(args)
    if not parts or len(parts) != 3 or not as_of:
        return _date(args, named)
    return f"{_date_of(parts)} (age {_years(parts, (as_of.year, as_of.month, as_of.day))})"


def _items(args: list[str], named: dict[str, str]) -> str:
    return "\n".join(a for a in args if a)


def _money(args: list[str], named: dict[str, str]) -> str:
    return f"US${args[0]}" if args else ""


def _as_of(args: list[str], named: dict[str, str]) -> str:
    return "As of " + _date(args, named) if args else ""


def _circa(args: list[str], named: dict[str, str]) -> str:
    return f"c. {args[0]}" if args else "c."


def _val(args: list[str], named: dict[str, str]) -> str:
    """``{{val|1.5|0.2|e=3|u=m}}`` -> ``1.5 ± 0.2 × 10^3 m``."""  # noqa: RUF002
    text = args[0] if args else ""
    if len(args) > 1 and args[1]:
        text += f" ± {args[1]}"
    if named.get("e"):
        text += f" × 10^{named['e']}"
    unit = named.get("u") or named.get("ul") or named.get("up") or ""
    return f"{text} {unit}".strip()


def _frac(args: list[str], named: dict[str, str]) -> str:
    """``{{frac|1|2}}`` -> ``1/2``, ``{{frac|3|1|2}}`` -> ``3 1/2``, ``{{frac|4}}`` -> ``1/4``."""
    if len(args) >= 3:
        return f"{args[0]} {args[1]}/{args[2]}"
    if len(args) == 2:
        return f"{args[0]}/{args[1]}"
    return f"1/{args[0]}" if args else ""


def _nihongo(args: list[str], named: dict[str, str]) -> str:
    """``{{nihongo|Tokyo|東京|Tōkyō}}`` -> ``Tokyo (東京, Tōkyō)``."""
    english, *rest = [*args, ""][:4]
    inside = ", ".join(a for a in rest if a)
    return f"{english} ({inside})" if english and inside else english or inside


def _angle(args: list[str], named: dict[str, str]) -> str:
    return f"⟨{args[0]}⟩" if args else ""


@lru_cache(maxsize=512)
def language_name(code: str) -> str:
    """English name of a language code (``sq`` -> ``Albanian``), from CLDR via babel."""
    names = Locale("en").languages
    base = code.strip().lower().replace("_", "-")
    return names.get(base) or names.get(base.split("-")[0]) or code


def _langx(args: list[str], named: dict[str, str]) -> str:
    """``{{langx|sq|Shqipëri}}`` -> ``Albanian: Shqipëri``."""
    return f"{language_name(args[0])}: {args[1]}" if len(args) > 1 and args[1] else ""


def _format_number(args: list[str], named: dict[str, str]) -> str:
    raw = args[0].strip() if args else ""
    whole, dot, fraction = raw.partition(".")
    if whole.lstrip("-").isdigit():
        return f"{int(whole):,}" + dot + fraction
    return raw


def _constant(text: str) -> Renderer:
    return lambda args, named: text


RENDERERS: dict[str, Renderer] = {
    "convert": convert.render,
    "cvt": lambda args, named: convert.render(args, {"abbr": "on", **named}),
    **dict.fromkeys(
        [
            "nowrap",
            "nobr",
            "small",
            "big",
            "smaller",
            "larger",
            "sic",
            "abbr",
            "nobold",
            "noitalic",
            "ill",
            "interlanguage link",
            "vanchor",
            "anchor text",
            "nts",
            "ntsh",
            "sc",
            "smallcaps",
            "sup",
            "sub",
            "center",
            "nastaliq",
            "tooltip",
            "keypress",
            "flag",
            "flagcountry",
            "flagu",
            "nobreak",
            "math",
            "mvar",
        ],
        _first,
    ),
    **dict.fromkeys(["lang", "transliteration", "transl", "rtl-lang", "lsj"], _second),
    **dict.fromkeys(["resize"], _last),
    **dict.fromkeys(["langx", "lang-x"], _langx),
    **dict.fromkeys(["chem", "chem2", "chemf"], _joined),
    **dict.fromkeys(["quote", "bquote", "blockquote", "quotation", "cquote", "quote box"], _text),
    **dict.fromkeys(
        [
            "start date",
            "end date",
            "start-date",
            "end-date",
            "end date and age",
            "birth date",
            "death date",
            "dts",
            "date",
            "birth year and age",
        ],
        _date,
    ),
    **dict.fromkeys(["death date and age", "death year and age"], _date_and_age),
    **dict.fromkeys(
        [
            "ubl",
            "unbulleted list",
            "ublist",
            "plainlist",
            "plain list",
            "flatlist",
            "hlist",
            "bulleted list",
            "bull list",
            "collapsible list",
            "vunblist",
        ],
        _items,
    ),
    **dict.fromkeys(["us$", "usd"], _money),
    "as of": _as_of,
    **dict.fromkeys(["circa", "c."], _circa),
    "val": _val,
    **dict.fromkeys(["frac", "sfrac", "fraction"], _frac),
    "nihongo": _nihongo,
    "legend": _second,
    "simplenuclide2": lambda args, named: "-".join(args[:2]),
    **dict.fromkeys(["angbr", "angle bracket"], _angle),
    "formatnum": _format_number,
    "lc": lambda args, named: _first(args, named).lower(),
    "uc": lambda args, named: _first(args, named).upper(),
    "ucfirst": lambda args, named: (lambda t: t[:1].upper() + t[1:])(_first(args, named)),
    "lcfirst": lambda args, named: (lambda t: t[:1].lower() + t[1:])(_first(args, named)),
    **dict.fromkeys(["ndash", "en dash", "endash"], _constant("–")),
    **dict.fromkeys(["mdash", "em dash", "emdash", "mdashb"], _constant("—")),
    **dict.fromkeys(["snd", "snds", "spnd", "sndash", "spaced ndash"], _constant(" – ")),
    **dict.fromkeys(["spaced mdash", "spmdash"], _constant(" — ")),
    **dict.fromkeys(["·", "dot", "middot", "dot-sep"], _constant(" · ")),
    **dict.fromkeys(["•", "bull", "bullet"], _constant(" • ")),
    **dict.fromkeys(["nbsp", "spaces", "sp", "thinsp", "space", "thin space"], _constant(" ")),
    **dict.fromkeys(["!", "pipe"], _constant("|")),
    "'s": _constant("'s"),
    "'": _constant("'"),
    '"': _constant('"'),
    "eqm": _constant(" ⇌ "),
    "=": _constant("="),
}
"""Template name (lower case, spaces) -> renderer. A parser function such as
``{{formatnum:1234}}`` is looked up by its name before the colon, with what follows the colon as
its first argument."""


DATED: dict[str, DatedRenderer] = {
    "age": _age,
    "age in years": _age,
    "age in years, months and days": _age_ymd,
    "start date and age": _date_and_age_ago,
    "birth date and age": _birth_date_and_age,
}
"""Templates whose text depends on the day of reading: rendered relative to a fixed date the
caller gives (the page's last revision, so the same page always reads the same), never today;
without one, only what needs no date (the date itself, an age between two dates given)."""


def renderer_for(name: str, as_of: date | None = None) -> Renderer | None:
    """The renderer of template ``name`` (normalised, lower case), or ``None`` to drop it.

    ``{{lang-sq|…}}`` renders as ``{{langx|sq|…}}``. The templates of :data:`DATED` count to
    ``as_of``.
    """
    if name in DATED:
        return partial(DATED[name], as_of=as_of)
    if name.startswith("lang-") and name not in RENDERERS:
        code = name[len("lang-") :]
        return lambda args, named: _langx([code, *args], named)
    return RENDERERS.get(name)
