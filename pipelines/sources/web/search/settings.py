"""The ``web.search`` settings: provider, query templates, result count and filters."""

from __future__ import annotations

from pydantic import Field, StrictInt, field_validator

from builders.settings import Strict
from pipelines.sources.web.search.base import QUERY_FIELDS, normalize_domain, template_fields

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
    """Where search documents come from; Google CSE keys come from the environment only."""

    provider: str = Field(
        "recorded",
        description=(
            "A live provider of search/registry.py, e.g. google_cse (Google Programmable Search, "
            "GOOGLE_API_KEY and GOOGLE_CSE_ID), used in live mode; recorded: the search log only."
        ),
    )
    queries: list[str] = Field(
        default_factory=lambda: ["{title}"],
        description=f"Query templates over article fields ({', '.join(QUERY_FIELDS)}).",
    )
    results_per_query: StrictInt = Field(
        10,
        ge=1,
        le=100,
        description="Hits per query; Google serves pages of 10 and never more than 100 in all.",
    )
    date_restrict: str | None = Field(
        None,
        pattern=r"^[dwmy]\d+$",
        description="Google dateRestrict: d/w/m/y and a count, e.g. 'm6' (last six months).",
    )
    language: str | None = Field(
        None,
        pattern=r"^lang_[A-Za-z]{2,3}(-[A-Za-z]{2,4})?$",
        description="Google lr, e.g. 'lang_en'; unset: any language.",
    )
    exclude_domains: list[str] = Field(
        default_factory=lambda: list(WIKIPEDIA_MIRRORS),
        description=(
            "Hits on these domains or their subdomains are dropped as mirrors. Wikipedia and its "
            "mirrors (WIKIPEDIA_MIRRORS) are always excluded; domains listed here are added to "
            "them."
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

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, name: str) -> str:
        from pipelines.sources.web.search.registry import LIVE_PROVIDERS

        known = ["recorded", *LIVE_PROVIDERS]
        if name not in known:
            raise ValueError(f"unknown provider {name!r}; known: {', '.join(known)}")
        return name

    @field_validator("exclude_domains")
    @classmethod
    def _domains(cls, domains: list[str]) -> list[str]:
        listed = [normalize_domain(d) for d in domains]
        return list(dict.fromkeys([*WIKIPEDIA_MIRRORS, *listed]))
