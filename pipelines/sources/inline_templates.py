"""Plain-text renderings of the inline templates that carry words in prose and infoboxes.

Every other template is dropped from plain text. The list covers what event articles use most:
measurements (``{{convert}}``), dates (``{{Start date}}``), wrappers (``{{nowrap}}``,
``{{lang}}``), lists in infoboxes (``{{ubl}}``, ``{{plainlist}}``) and money (``{{US$}}``).
"""

from __future__ import annotations

import calendar
from collections.abc import Callable

Renderer = Callable[[list[str], dict[str, str]], str]

_RANGE_WORDS = {"-", "–", "to", "and", "or", "x", "by", "+/-", "±", "&"}


def _convert(args: list[str], named: dict[str, str]) -> str:
    if len(args) >= 4 and args[1] in _RANGE_WORDS:
        return " ".join(args[:4])
    return " ".join(args[:2])


def _first(args: list[str], named: dict[str, str]) -> str:
    return args[0] if args else ""


def _second(args: list[str], named: dict[str, str]) -> str:
    return args[1] if len(args) > 1 else ""


def _date(args: list[str], named: dict[str, str]) -> str:
    parts = [a for a in args[:3] if a.strip().isdigit()]
    if not parts:
        return args[0] if args else ""
    year = parts[0]
    if len(parts) == 1:
        return year
    month = int(parts[1])
    month_name = calendar.month_name[month] if 1 <= month <= 12 else parts[1]
    if len(parts) == 2:
        return f"{month_name} {year}"
    return f"{int(parts[2])} {month_name} {year}"


def _items(args: list[str], named: dict[str, str]) -> str:
    return "\n".join(a for a in args if a)


def _money(args: list[str], named: dict[str, str]) -> str:
    return f"US${args[0]}" if args else ""


def _as_of(args: list[str], named: dict[str, str]) -> str:
    return "As of " + _date(args, named) if args else ""


def _circa(args: list[str], named: dict[str, str]) -> str:
    return f"c. {args[0]}" if args else "c."


RENDERERS: dict[str, Renderer] = {
    **dict.fromkeys(["convert", "cvt"], _convert),
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
        ],
        _first,
    ),
    **dict.fromkeys(["lang", "transliteration", "transl"], _second),
    **dict.fromkeys(
        [
            "start date",
            "end date",
            "start date and age",
            "end date and age",
            "birth date",
            "death date",
            "dts",
            "date",
        ],
        _date,
    ),
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
        ],
        _items,
    ),
    **dict.fromkeys(["us$", "usd"], _money),
    "as of": _as_of,
    **dict.fromkeys(["circa", "c."], _circa),
}


def render_inline(name: str, args: list[str], named: dict[str, str]) -> str | None:
    """Return the plain text of template ``name`` (normalised, lower case) or ``None`` to drop it.

    ``args`` are the positional parameters and ``named`` the named ones, already plain text.
    """
    renderer = RENDERERS.get(name)
    return renderer(args, named) if renderer else None
