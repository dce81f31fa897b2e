"""``{{convert}}`` as Wikipedia prints its first part: the value, or range, with its unit's name or
symbol (``{{convert|400000|oilbbl/d|m3/d}}`` -> ``400,000 barrels per day``).

The converted value in brackets is left out: it needs every unit's factor and Module:Convert's
rounding rules, and the value as written carries the fact. The unit names and symbols are those
of Module:Convert's documented units (Wikipedia's "Help:Convert units" tables), written here for
the codes that occur in the prose of real articles: every code of gensim's shortened English
pages-articles dump (106 articles, 436 conversions) and a few common others. A code not in
:data:`UNITS` is printed as written and counted (:func:`unknown_units`), so the wiki stage's
``stats.json`` shows what is missing.

Options read: ``abbr`` (``on``: symbols; ``off``: names; ``in``/``out``: symbol or name for the
value shown; ``values``: no unit; default: the name, but the symbol for temperatures as
Wikipedia does, and always the symbol for ``{{cvt}}``), ``adj=on``
(``10-kilometre``), ``sp=us`` (``kilometers``). Ranges: ``{{convert|10|to|20|km}}`` ->
``10 to 20 kilometres``, with ``-`` (or an en dash), ``to``, ``and``, ``or``, ``by``, ``x``,
``+/-`` and their ``(-)`` forms; and values in two units, ``{{convert|5|ft|4|in|cm}}`` -> ``5
feet 4 inches``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UNITS: dict[str, tuple[str, str, str]] = {
    # length
    "m": ("metre", "metres", "m"),
    "km": ("kilometre", "kilometres", "km"),
    "cm": ("centimetre", "centimetres", "cm"),
    "mm": ("millimetre", "millimetres", "mm"),
    "mi": ("mile", "miles", "mi"),
    "nmi": ("nautical mile", "nautical miles", "nmi"),
    "ft": ("foot", "feet", "ft"),
    "in": ("inch", "inches", "in"),
    "yd": ("yard", "yards", "yd"),
    "AU": ("astronomical unit", "astronomical units", "AU"),
    "ly": ("light-year", "light-years", "ly"),
    # area
    "m2": ("square metre", "square metres", "m2"),
    "km2": ("square kilometre", "square kilometres", "km2"),
    "sqmi": ("square mile", "square miles", "sq mi"),
    "sqft": ("square foot", "square feet", "sq ft"),
    "ha": ("hectare", "hectares", "ha"),
    "acre": ("acre", "acres", "acres"),
    "e6acre": ("million acres", "million acres", "million acres"),
    # volume
    "m3": ("cubic metre", "cubic metres", "m3"),
    "ft3": ("cubic foot", "cubic feet", "cu ft"),
    "cuft": ("cubic foot", "cubic feet", "cu ft"),
    "Tcuft": ("trillion cubic feet", "trillion cubic feet", "×10^12 cu ft"),
    "L": ("litre", "litres", "L"),
    "USgal": ("US gallon", "US gallons", "US gal"),
    "MUSgal": ("million US gallons", "million US gallons", "×10^6 US gal"),
    "oilbbl": ("barrel", "barrels", "bbl"),
    "Moilbbl": ("million barrels", "million barrels", "×10^6 bbl"),
    "Goilbbl": ("billion barrels", "billion barrels", "×10^9 bbl"),
    # flow
    "oilbbl/d": ("barrel per day", "barrels per day", "bbl/d"),
    "koilbbl/d": ("thousand barrels per day", "thousand barrels per day", "×10^3 bbl/d"),
    "Moilbbl/d": ("million barrels per day", "million barrels per day", "×10^6 bbl/d"),
    # mass
    "kg": ("kilogram", "kilograms", "kg"),
    "g": ("gram", "grams", "g"),
    "t": ("tonne", "tonnes", "t"),
    "lb": ("pound", "pounds", "lb"),
    "oz": ("ounce", "ounces", "oz"),
    "st": ("stone", "stone", "st"),
    "LT": ("long ton", "long tons", "long tons"),
    "ST": ("short ton", "short tons", "short tons"),
    "MT": ("metric ton", "metric tons", "t"),
    "e6carat": ("million carats", "million carats", "million carats"),
    # speed
    "m/s": ("metre per second", "metres per second", "m/s"),
    "ft/s": ("foot per second", "feet per second", "ft/s"),
    "km/h": ("kilometre per hour", "kilometres per hour", "km/h"),
    "mph": ("mile per hour", "miles per hour", "mph"),
    "kn": ("knot", "knots", "kn"),
    # temperature, and temperature differences
    "C": ("degree Celsius", "degrees Celsius", "°C"),
    "°C": ("degree Celsius", "degrees Celsius", "°C"),
    "F": ("degree Fahrenheit", "degrees Fahrenheit", "°F"),
    "°F": ("degree Fahrenheit", "degrees Fahrenheit", "°F"),
    "K": ("kelvin", "kelvins", "K"),
    "C-change": ("degree Celsius", "degrees Celsius", "°C"),
    "F-change": ("degree Fahrenheit", "degrees Fahrenheit", "°F"),
    # population density
    "PD/sqmi": ("inhabitant per square mile", "inhabitants per square mile", "/sq mi"),
    "PD/km2": ("inhabitant per square kilometre", "inhabitants per square kilometre", "/km2"),
    # power
    "W": ("watt", "watts", "W"),
    "kW": ("kilowatt", "kilowatts", "kW"),
    "MW": ("megawatt", "megawatts", "MW"),
    "hp": ("horsepower", "horsepower", "hp"),
}
"""Unit code -> (name, plural name, symbol), British spelling as Module:Convert's default; a
superscript is written as its digit (``km2``), as plain text shows it."""

SYMBOL_BY_DEFAULT = frozenset({"C", "°C", "F", "°F", "K", "C-change", "F-change"})
"""Units shown by their symbol unless ``abbr=off``: Module:Convert prints temperatures as
``20 °C (68 °F)``."""

RANGES: dict[str, tuple[str, str]] = {
    "-": ("–", "–"),
    "–": ("–", "–"),
    "to": (" to ", " to "),
    "to(-)": (" to ", "–"),
    "and": (" and ", " and "),
    "and(-)": (" and ", "–"),
    "or": (" or ", " or "),
    "by": (" by ", " × "),
    "x": (" by ", " × "),
    "+/-": (" ± ", " ± "),
    "&": (" & ", " & "),
}
"""Range word -> what joins the values when units are shown by name, and by symbol."""

_NUMBER_RE = re.compile(r"^[-−+]?(?:\d[\d,]*)?(?:\.\d+)?(?:e-?\d+)?$")
_GROUPS_RE = re.compile(r"^([-−+]?)(\d{4,})(\.\d+)?$")
_US_SPELLING = (("metre", "meter"), ("litre", "liter"))


@dataclass(frozen=True)
class Reading:
    """What a ``{{convert}}`` says before any output unit: its values and the words between
    them (a range), and its units with the value of each after the first (``5|ft|4|in``)."""

    values: tuple[str, ...]
    joins: tuple[str, ...]
    units: tuple[str, ...]
    more: tuple[str, ...]


def _is_number(text: str) -> bool:
    return bool(text) and any(c.isdigit() for c in text) and bool(_NUMBER_RE.match(text))


def read(args: list[str]) -> Reading:
    """Split the positional arguments of a ``{{convert}}``."""
    args = [a.strip() for a in args]
    values, joins = [args[0] if args else ""], []
    i = 1
    while i + 1 < len(args) and args[i] in RANGES and _is_number(args[i + 1]):
        joins.append(args[i])
        values.append(args[i + 1])
        i += 2
    units, more = [args[i] if i < len(args) else ""], []
    while i + 2 < len(args) and _is_number(args[i + 1]) and args[i + 2] in UNITS:
        more.append(args[i + 1])
        units.append(args[i + 2])
        i += 2
    return Reading(tuple(values), tuple(joins), tuple(units), tuple(more))


def unknown_units(args: list[str]) -> list[str]:
    """The unit codes of a ``{{convert}}`` that :data:`UNITS` has no name for."""
    return [u for u in read(args).units if u and u not in UNITS]


def number(text: str) -> str:
    """A value as Module:Convert prints it: digits grouped by commas from 1,000 up."""
    grouped = _GROUPS_RE.match(text)
    if not grouped:
        return text
    sign, whole, fraction = grouped.groups()
    return f"{sign}{int(whole):,}{fraction or ''}"


def _by_symbol(unit: str, abbr: str) -> bool:
    if abbr in ("on", "in", "yes"):
        return True
    if abbr in ("off", "out", "no"):
        return False
    return unit in SYMBOL_BY_DEFAULT


def _unit(unit: str, *, symbol: bool, plural: bool, us: bool) -> str:
    name, names, shown = UNITS[unit]
    if symbol:
        return shown
    word = names if plural else name
    for british, american in _US_SPELLING if us else ():
        word = word.replace(british, american)
    return word


def _raw(reading: Reading) -> str:
    """A conversion with a unit code :data:`UNITS` lacks, as written (the old rendering)."""
    parts = [reading.values[0]]
    for join, value in zip(reading.joins, reading.values[1:], strict=True):
        parts += [join, value]
    return " ".join([*parts, reading.units[0]]).strip()


def render(args: list[str], named: dict[str, str]) -> str:
    """The text of a ``{{convert}}``: its value(s) and unit(s), by name or by symbol."""
    reading = read(args)
    if not reading.values[0]:
        return ""
    if any(u not in UNITS for u in reading.units):  # printed as written, and counted
        return _raw(reading)
    abbr = named.get("abbr", "").strip().lower()
    symbol = _by_symbol(reading.units[0], abbr)
    adjective = named.get("adj", "").strip().lower() == "on" and not symbol
    us = named.get("sp", "").strip().lower() == "us"
    shown = [number(reading.values[0])]
    for join, value in zip(reading.joins, reading.values[1:], strict=True):
        shown.append(RANGES[join][int(symbol)] + number(value))
    values = "".join(shown)
    if abbr == "values":
        return values
    one = len(reading.values) == 1 and reading.values[0] in ("1", "1.0")
    first = _unit(reading.units[0], symbol=symbol, plural=not (one or adjective), us=us)
    text = f"{values.replace(' ', '-')}-{first}" if adjective else f"{values} {first}"
    for value, unit in zip(reading.more, reading.units[1:], strict=True):
        text += f" {number(value)} {_unit(unit, symbol=symbol, plural=value != '1', us=us)}"
    return text
