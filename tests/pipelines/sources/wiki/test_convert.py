"""``{{convert}}`` prints its value(s) with the unit's name or symbol, as Wikipedia does."""

import pytest

from pipelines.sources.wiki import convert
from pipelines.sources.wiki.wikitext import parse_wikitext


@pytest.mark.parametrize(
    ("args", "named", "shown"),
    [
        (["400000", "oilbbl/d", "m3/d"], {}, "400,000 barrels per day"),
        (["52419", "sqmi", "km2", "abbr=on"], {"abbr": "on"}, "52,419 sq mi"),
        (["62800", "km", "mi"], {}, "62,800 kilometres"),
        (["1", "mi", "km"], {}, "1 mile"),
        (["10", "to", "20", "km"], {}, "10 to 20 kilometres"),
        (["10", "-", "20", "km"], {"abbr": "on"}, "10–20 km"),
        (["3", "by", "4", "m"], {"abbr": "on"}, "3 × 4 m"),
        (["3", "by", "4", "m"], {}, "3 by 4 metres"),
        (["5", "ft", "4", "in", "cm", "0"], {}, "5 feet 4 inches"),
        (["20", "C"], {}, "20 °C"),
        (["20", "C"], {"abbr": "off"}, "20 degrees Celsius"),
        (["3", "km"], {"adj": "on"}, "3-kilometre"),
        (["3", "km"], {"adj": "on", "abbr": "on"}, "3 km"),
        (["3", "km"], {"sp": "us"}, "3 kilometers"),
        (["12.5", "m", "ft", "1"], {}, "12.5 metres"),
        (["1234.5", "kg"], {}, "1,234.5 kilograms"),
        (["1,234", "kg"], {}, "1,234 kilograms"),
        (["2", "e6acre", "e6ha"], {}, "2 million acres"),
        (["2", "km"], {"abbr": "values"}, "2"),
    ],
)
def test_the_value_prints_with_its_unit_by_name_or_symbol(args, named, shown):
    assert convert.render(args, named) == shown


def test_a_unit_code_without_a_name_is_printed_as_written_and_counted():
    assert convert.render(["7", "furlong/fortnight"], {}) == "7 furlong/fortnight"
    assert convert.render(["7", "to", "9", "zz"], {}) == "7 to 9 zz"
    assert convert.unknown_units(["7", "furlong/fortnight", "m/s"]) == ["furlong/fortnight"]
    assert convert.unknown_units(["5", "ft", "4", "in", "cm"]) == []
    assert convert.render([], {}) == ""


def test_the_numbers_of_a_conversion_are_grouped_only_when_plain():
    assert convert.number("400000") == "400,000"
    assert convert.number("-1500") == "-1,500"
    assert convert.number("999") == "999"
    assert convert.number("1.5e6") == "1.5e6"


def test_cvt_is_convert_by_symbol():
    page = parse_wikitext("{{cvt|62800|km|mi}} or {{cvt|3|C|abbr=off}}.")
    assert page.summary == "62,800 km or 3 degrees Celsius."
