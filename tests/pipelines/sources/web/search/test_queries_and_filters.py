"""Query templates, domain exclusion and redaction."""

from __future__ import annotations

import pytest

from pipelines.sources.web.search import SearchError, is_excluded, redact, render_queries

FIELDS = {"title": "2026 Northfield flood", "year": "2026", "location": ""}


def test_render_queries_fills_collapses_and_dedupes():
    queries = render_queries(["{title}", "{title} {location}", "{title} {year} news"], FIELDS)
    assert queries == ["2026 Northfield flood", "2026 Northfield flood 2026 news"]
    assert render_queries(["{location}"], FIELDS) == []


def test_render_queries_names_a_missing_field():
    with pytest.raises(SearchError, match=r"needs field 'location'.*given: title, year"):
        render_queries(["{title} {location}"], {"title": "x", "year": "2026"})


def test_render_queries_rejects_bad_template_syntax():
    with pytest.raises(SearchError, match="not a valid template"):
        render_queries(["{title"], FIELDS)


@pytest.mark.parametrize(
    ("url", "excluded"),
    [
        ("https://wikipedia.org/wiki/X", True),
        ("https://en.wikipedia.org/wiki/X", True),
        ("http://EN.M.Wikipedia.ORG:443/wiki/X", True),
        ("https://www.wikiwand.com/en/X", True),
        ("https://wikipedia.org./wiki/X", True),
        ("https://notwikipedia.org/X", False),
        ("https://wikipedia.org.evil.example/X", False),
        ("https://news.example/?ref=wikipedia.org", False),
        ("https://user@news.example/", False),
        ("not a url", False),
        ("http://[::1", False),
    ],
)
def test_is_excluded_matches_domain_and_subdomains(url, excluded):
    assert is_excluded(url, ["wikipedia.org", "wikiwand.com"]) is excluded


def test_redact_replaces_secrets_and_key_parameters():
    uri = "https://customsearch.googleapis.com/customsearch/v1?q=x&cx=CX-1&key=AIzaABC&alt=json"
    text = f'<HttpError 503 when requesting {uri} returned "Backend Error">'
    clean = redact(text, ["CX-1", ""])
    assert "AIzaABC" not in clean and "CX-1" not in clean
    assert "key=REDACTED&alt=json" in clean and "cx=REDACTED" in clean
    assert redact("see ?KEY=abc#frag and a+b/c", ["a+b/c"]) == "see ?KEY=REDACTED#frag and REDACTED"
    assert redact("a%2Bb%2Fc", ["a+b/c"]) == "REDACTED"
    assert redact("monkey=1 and ?key=2", [], key_params=False) == "monkey=1 and ?key=2"
    assert redact("monkey=1&donkey=2", []) == "monkey=1&donkey=2"


def test_wikipedia_mirrors_stay_excluded_when_domains_are_listed():
    from pipelines.sources.web.search.settings import WIKIPEDIA_MIRRORS, SearchSettings

    assert SearchSettings().exclude_domains == list(WIKIPEDIA_MIRRORS)  # the default is unchanged
    s = SearchSettings(exclude_domains=["*.Valdrapedia.example", "wikiwand.com"])
    assert s.exclude_domains == [*WIKIPEDIA_MIRRORS, "valdrapedia.example"]
    assert is_excluded("https://en.wikipedia.org/wiki/Flood", s.exclude_domains)
    assert is_excluded("https://www.dbpedia.org/page/Flood", s.exclude_domains)
    assert is_excluded("https://en.valdrapedia.example/Flood", s.exclude_domains)
    assert SearchSettings(exclude_domains=[]).exclude_domains == list(WIKIPEDIA_MIRRORS)
    assert "always excluded" in SearchSettings.model_fields["exclude_domains"].description
