"""Search providers for related documents: Google CSE live, or a recorded JSONL log replayed."""

from pipelines.sources.web.search.base import (
    QUERY_FIELDS,
    SearchError,
    SearchHit,
    SearchProvider,
    is_excluded,
    redact,
    render_queries,
)
from pipelines.sources.web.search.google_cse import GoogleCSE
from pipelines.sources.web.search.recorded import (
    RecordedProvider,
    SearchLog,
    read_hits,
    recorded_queries,
)
from pipelines.sources.web.search.settings import SearchSettings

__all__ = [
    "QUERY_FIELDS",
    "GoogleCSE",
    "RecordedProvider",
    "SearchError",
    "SearchHit",
    "SearchLog",
    "SearchProvider",
    "SearchSettings",
    "is_excluded",
    "read_hits",
    "recorded_queries",
    "redact",
    "render_queries",
]
