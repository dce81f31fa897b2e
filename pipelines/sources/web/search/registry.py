"""Live search providers by name: adding a provider is one class plus one line here.

Each provider class builds itself from the environment with ``from_env(**options)``, so keys
never pass through settings.
"""

from __future__ import annotations

from pipelines.sources.web.search.base import SearchProvider
from pipelines.sources.web.search.google_cse import GoogleCSE

LIVE_PROVIDERS: dict[str, type[SearchProvider]] = {GoogleCSE.name: GoogleCSE}


def live_provider(name: str, **options: object) -> SearchProvider:
    """Build the live provider ``name`` from the environment."""
    return LIVE_PROVIDERS[name].from_env(**options)  # type: ignore[attr-defined]
