"""The ``web.search`` settings: the providers in order, query templates, result count, filters,
and each provider's own settings (never its key: keys come from the environment)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictInt, field_validator, model_validator

from builders.settings import Strict
from pipelines.sources.web.search.base import QUERY_FIELDS, normalize_domain, template_fields
from pipelines.sources.web.search.brave import BraveSettings
from pipelines.sources.web.search.searxng import SearxngSettings
from pipelines.sources.web.search.serp_api import SerpApiSettings

WIKIPEDIA_MIRRORS = (
    # Wikimedia projects
    "wikipedia.org",
    "wikimedia.org",
    "wikidata.org",
    # mirrors, front-ends and forks of Wikipedia text
    "dbpedia.org",
    "wikiwand.com",
    "wikizero.com",
    "wiki2.org",
    "wikimili.com",
    "everybodywiki.com",
    "alchetron.com",
    "wikibrief.org",
    "wikiless.org",
    "infogalactic.com",
    "justapedia.org",
    "en-academic.com",
    "wikimonde.com",
    "wiki.kidzsearch.com",
)
"""Always excluded: a reference article must not be its own related document (WikiGenBench
dropped Wikipedia results; mirrors leak the same text under another name)."""


class SearchSettings(Strict):
    """Where search documents come from: the providers in order, each with its own settings."""

    providers: list[str] = Field(
        default_factory=list,
        description=(
            "Live providers of search/registry.py in the order tried (live mode only): brave "
            "(BRAVE_API_KEY), serpapi (SERPAPI_KEY), searxng (web.search.searxng.base_url), "
            "google_cse (GOOGLE_API_KEY and GOOGLE_CSE_ID; existing keys only, whole-web search "
            "ends 2027-01-01). When one fails for good (no key, 401/403, 410, quota spent) the "
            "next one serves. Empty: the search log only."
        ),
    )
    provider: str | None = Field(
        None,
        description="Deprecated: one provider; the same as providers: [provider].",
    )
    brave: BraveSettings = Field(default_factory=BraveSettings)
    serpapi: SerpApiSettings = Field(default_factory=SerpApiSettings)
    searxng: SearxngSettings = Field(default_factory=SearxngSettings)
    queries: list[str] = Field(
        default_factory=lambda: ["{title}"],
        description=f"Query templates over article fields ({', '.join(QUERY_FIELDS)}).",
    )
    results_per_query: StrictInt = Field(
        10,
        ge=1,
        le=100,
        description=(
            "Hits per query, paged as each provider pages (Google and SerpApi 10 a page, Brave "
            "20); Google never serves more than 100."
        ),
    )
    date_restrict: str | None = Field(
        None,
        pattern=r"^[dwmy]\d+$",
        description=(
            "d/w/m/y and a count, e.g. 'm6' (last six months): Google's dateRestrict, Brave's "
            "freshness, SerpApi's tbs date range, SearXNG's time_range (widened, and reported)."
        ),
    )
    language: str | None = Field(
        None,
        pattern=r"^lang_[A-Za-z]{2,3}(-[A-Za-z]{2,4})?$",
        description=(
            "Google lr, e.g. 'lang_en' (Brave search_lang and SearXNG language 'en'); unset: any "
            "language."
        ),
    )
    exclude_domains: list[str] = Field(
        default_factory=lambda: list(WIKIPEDIA_MIRRORS),
        description=(
            "Hits on these domains or their subdomains are dropped as mirrors, after the answer, "
            "the same way for every provider. Wikipedia and its mirrors (WIKIPEDIA_MIRRORS) are "
            "always excluded; domains listed here are added to them."
        ),
    )
    retries: StrictInt = Field(3, ge=0, description="Retries on HTTP 429 and 5xx, backing off.")

    @field_validator("queries")
    @classmethod
    def _known_fields(cls, templates: list[str]) -> list[str]:
        for template in templates:
            for name in template_fields(template):
                if name not in QUERY_FIELDS:
                    raise ValueError(
                        f"query template {template!r} uses unknown field {name!r} "
                        f"(known: {', '.join(QUERY_FIELDS)})"
                    )
        return templates

    @model_validator(mode="before")
    @classmethod
    def _one_provider(cls, data: Any) -> Any:
        """``provider: NAME`` (the older setting) is ``providers: [NAME]``; ``recorded``: none."""
        if isinstance(data, dict) and data.get("provider") is not None:
            if data.get("providers"):
                raise ValueError("set providers (a list) or provider (deprecated), not both")
            name = data["provider"]
            data = {**data, "providers": [] if name == "recorded" else [name]}
        return data

    @field_validator("providers")
    @classmethod
    def _known_providers(cls, names: list[str]) -> list[str]:
        from pipelines.sources.web.search.registry import LIVE_PROVIDERS

        for name in names:
            if name not in LIVE_PROVIDERS:
                raise ValueError(f"unknown provider {name!r}; known: {', '.join(LIVE_PROVIDERS)}")
        if len(set(names)) != len(names):
            raise ValueError(f"a provider is listed twice: {names}")
        return names

    @field_validator("exclude_domains")
    @classmethod
    def _domains(cls, domains: list[str]) -> list[str]:
        listed = [normalize_domain(d) for d in domains]
        return list(dict.fromkeys([*WIKIPEDIA_MIRRORS, *listed]))
