"""The search side of ``benchsmith estimate``: queries the log answers are free, the rest cost
requests by each provider's page size and list price."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.console import Console

from pipelines.display import print_search_plan
from pipelines.sources.web.search import SearchSettings
from pipelines.sources.web.search.plan import search_plan
from tests.support.records import make_article
from tests.support.snapshot import ROOT

LOG = ROOT / "snapshot" / "web" / "search.jsonl"


def test_recorded_queries_are_free_and_new_ones_priced_per_provider():
    created = datetime(2026, 3, 1, tzinfo=UTC)
    articles = [
        make_article(title="Cyclone Imre", created_at=created),  # in the snapshot's log
        make_article(title="Unrecorded quake", created_at=created),
        make_article(title="Unrecorded flood", created_at=created),
    ]
    search = SearchSettings(
        providers=["brave", "serpapi", "searxng"],
        queries=["{title}", "{title} {year}"],
        results_per_query=25,
    )
    plan = search_plan(search, LOG, articles)
    assert (plan["queries"], plan["recorded"], plan["new"]) == (6, 1, 5)
    brave, serp, searx = (plan["providers"][n] for n in ("brave", "serpapi", "searxng"))
    assert brave == {"requests": 10, "usd": 0.05, "usd_per_1000": 5.0}  # 25 hits: 2 pages of 20
    assert serp == {"requests": 15, "usd": 0.225, "usd_per_1000": 15.0}  # 3 pages of 10
    assert searx["requests"] == 15 and searx["usd"] == 0.0

    out = Console(width=120, record=True)
    print_search_plan(plan, out)
    text = " ".join(out.export_text().split())
    assert "6 queries, 1 in the search log, 5 to ask" in text and "0.2250" in text
