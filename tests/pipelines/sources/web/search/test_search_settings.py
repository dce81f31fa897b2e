"""SearchSettings: defaults, and load-time errors that name the bad value."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pipelines.sources.web.search import SearchSettings, is_excluded
from pipelines.sources.web.search.settings import WIKIPEDIA_MIRRORS


def test_search_settings_defaults_replay_and_exclude_wikipedia_mirrors():
    s = SearchSettings()
    assert (s.providers, s.queries, s.results_per_query, s.retries) == (
        [],
        ["{title}"],
        10,
        3,
    )
    assert s.date_restrict is None and s.language is None
    for domain in (
        "wikipedia.org",
        "wikiwand.com",
        "wikizero.com",
        "wiki2.org",
        "everybodywiki.com",
        "dbpedia.org",
        "wikimili.com",
        "alchetron.com",
    ):
        assert domain in s.exclude_domains
    assert is_excluded("https://en.m.wikipedia.org/wiki/Flood", s.exclude_domains)
    assert not is_excluded("https://news.example/wikipedia.org", s.exclude_domains)


def test_search_settings_query_with_unknown_field_fails_naming_it():
    with pytest.raises(ValidationError, match="unknown field 'city'") as info:
        SearchSettings(queries=["{title}", "{title} {city}"])
    assert info.value.errors()[0]["loc"] == ("queries",)
    assert (
        SearchSettings(queries=["{title} {year}", "{title} {location}"]).queries[1]
        == "{title} {location}"
    )


@pytest.mark.parametrize("template", ["{}", "{0}", "{title.upper}", "{title", "{title[0]}"])
def test_search_settings_rejects_non_plain_template_fields(template):
    with pytest.raises(ValidationError, match="query template"):
        SearchSettings(queries=[template])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("results_per_query", 0),
        ("results_per_query", 101),
        ("results_per_query", "10"),
        ("date_restrict", "6m"),
        ("date_restrict", "m"),
        ("language", "en"),
        ("providers", ["bing"]),
        ("providers", ["brave", "brave"]),
        ("retries", -1),
        ("exclude_domains", ["https://wikipedia.org/"]),
        ("exclude_domians", []),
    ],
)
def test_search_settings_rejects_bad_values(field, value):
    with pytest.raises(ValidationError) as info:
        SearchSettings(**{field: value})
    assert info.value.errors()[0]["loc"][0] == field


def test_search_settings_accept_google_forms_and_normalize_domains():
    s = SearchSettings(
        provider="google_cse",
        results_per_query=100,
        date_restrict="y1",
        language="lang_zh-CN",
        exclude_domains=["*.Wikipedia.org", "example.com.", "example.com"],
    )
    assert (s.date_restrict, s.language) == ("y1", "lang_zh-CN")
    assert s.exclude_domains == [*WIKIPEDIA_MIRRORS, "example.com"]


def test_search_settings_are_frozen():
    with pytest.raises(ValidationError):
        SearchSettings().retries = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("given", "providers"),
    [({"provider": "google_cse"}, ["google_cse"]), ({"provider": "recorded"}, []),
     ({"providers": ["searxng", "brave"]}, ["searxng", "brave"])],
)  # fmt: skip
def test_the_older_single_provider_setting_still_reads(given, providers):
    assert SearchSettings(**given).providers == providers


def test_provider_and_providers_together_are_refused():
    with pytest.raises(ValidationError, match="not both"):
        SearchSettings(provider="brave", providers=["serpapi"])
