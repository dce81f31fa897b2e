"""What a live web stage would ask its search providers: the queries of the selected events,
those the search log answers already, and the requests and list price of the rest on each
provider of ``web.search.providers`` (for ``benchsmith estimate``)."""

from __future__ import annotations

from math import ceil
from typing import Any

from builders.wikigen.records import Article
from pipelines.sources.web.search.base import render_queries
from pipelines.sources.web.search.recorded import RecordedProvider
from pipelines.sources.web.search.registry import LIVE_PROVIDERS


def article_fields(article: Article) -> dict[str, str]:
    """The fields a query template may use, from one selected event."""
    return {
        "title": article.title,
        "year": str(article.created_at.year) if article.created_at else "",
        "location": article.infobox.get("location", ""),
    }


def search_plan(search: Any, search_log: Any, articles: list[Article]) -> dict[str, Any]:
    """Queries, those recorded already, and per provider the requests and USD the new ones
    would take if that provider served them all (``search`` is ``web.search``)."""
    queries = list(
        dict.fromkeys(
            q for a in articles for q in render_queries(search.queries, article_fields(a))
        )
    )
    recorded = RecordedProvider(search_log)
    new = [q for q in queries if not recorded.knows(q)]
    providers = {}
    for name in search.providers or list(LIVE_PROVIDERS):
        cls = LIVE_PROVIDERS[name]
        requests = len(new) * ceil(search.results_per_query / cls.page_size)
        price = cls.usd_per_1000
        providers[name] = {
            "requests": requests,
            "usd": None if price is None else round(requests * price / 1000, 4),
            "usd_per_1000": price,
        }
    return {"queries": len(queries), "recorded": len(queries) - len(new), "new": len(new),
            "results_per_query": search.results_per_query, "providers": providers}  # fmt: skip
