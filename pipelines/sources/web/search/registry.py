"""Live search providers by name: adding a provider is one class plus one line here.

Each provider class builds itself with ``from_settings(own, retries=…)``: its own settings
from ``web.search.NAME`` (if it has any) and its key from the environment, so keys never pass
through settings.
"""

from __future__ import annotations

from typing import Any

from pipelines.sources.web.search.base import SearchProvider
from pipelines.sources.web.search.brave import BraveSearch
from pipelines.sources.web.search.google_cse import GoogleCSE
from pipelines.sources.web.search.searxng import SearXNG
from pipelines.sources.web.search.serp_api import SerpApi

LIVE_PROVIDERS: dict[str, type[SearchProvider]] = {
    p.name: p for p in (BraveSearch, SerpApi, SearXNG, GoogleCSE)
}


def live_provider(name: str, search: Any) -> SearchProvider:
    """Build the live provider ``name`` from ``search`` (the ``web.search`` settings) and the
    environment; raises
    :class:`~pipelines.sources.web.search.base.SearchUnavailable` when it cannot serve."""
    own = getattr(search, name, None)
    return LIVE_PROVIDERS[name].from_settings(own, retries=search.retries)  # type: ignore[attr-defined]
