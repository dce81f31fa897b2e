"""Regenerate the snapshot's web side by running the live code against a local copy of the web.

The authored pages in ``snapshot/web/site`` are served over HTTPS on 127.0.0.1 under their own
``.example`` host names (a throw-away CA makes TLS real); the live fetcher, with a resolver
entry mapping ``*.example`` to that server and an allow-list naming 127.0.0.1 explicitly, fetches
every related document of the selected events into a fresh WARC archive, and looks for
archived copies of the human-editor links it lost in the stand-in web archive
(``wayback/``, :mod:`pipelines.snapshot.wayback`) with the web stage's own code. Search results
are recorded the same way, through the provider interface, from ``pages.jsonl``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import yaml

from builders.wikigen.documents import PENDING, candidates
from builders.wikigen.entries import event_id
from builders.wikigen.select import classify
from pipelines.snapshot.site_server import serve_site
from pipelines.snapshot.tls import make_certificates
from pipelines.snapshot.wayback import ARCHIVE_HOST
from pipelines.sources.web.collect import archive_searches, fetch_documents
from pipelines.sources.web.search import SearchHit, SearchLog, SearchProvider, is_excluded
from pipelines.sources.web.urls import canonical_url, host_of
from pipelines.sources.wiki.dump import read_dump


class SiteSearch(SearchProvider):
    """A search engine over the snapshot's page manifest: pages listed for an event, in order."""

    name = "snapshot_site"

    def __init__(self, manifest: Path, when: datetime):
        self.pages = [json.loads(line) for line in manifest.read_text("utf-8").splitlines() if line]
        self.when = when

    def search(
        self, query: str, *, num: int, date_restrict: str | None = None, language: str | None = None
    ) -> list[SearchHit]:
        found = [p for p in self.pages if p["event"] == query and p.get("search", True)]
        return [
            SearchHit(
                query=query,
                provider=self.name,
                rank=i,
                url=p["url"],
                title=p.get("title", ""),
                snippet=p.get("snippet", ""),
                retrieved_at=self.when,
            )
            for i, p in enumerate(found[:num], start=1)
        ]


def record_web(params: Any, web_dir: Path, *, when: datetime | None = None) -> dict[str, Any]:
    """Rebuild ``web_dir/archive`` and the search log from ``web_dir/site``; return counts.
    Search answers are dated ``when`` (now when None)."""
    web = params.web
    site, manifest = web_dir / "site", web_dir / "pages.jsonl"
    traps = yaml.safe_load((web_dir / "traps.yaml").read_text("utf-8")) or {}
    wiki = params.wiki
    assert wiki.dump is not None
    events = [
        a
        for a in read_dump(wiki.dump.path, skip_sections=wiki.skip_sections)
        if classify(a, wiki) is None
    ]
    when = when or datetime.now(UTC).replace(microsecond=0)
    search = SiteSearch(manifest, when)
    shutil.rmtree(web.archive, ignore_errors=True)
    web.search_log.unlink(missing_ok=True)
    log = SearchLog(web.search_log)
    docs = []
    for article in events:
        hits = search.search(article.title, num=web.search.results_per_query)
        log.append(hits, query=article.title, provider=search.name)
        docs += candidates(
            event_id(article),
            article,
            hits,
            canonical_url,
            lambda url: is_excluded(url, web.search.exclude_domains),
        )
    urls = list(dict.fromkeys(d.url for d in docs if d.status == PENDING))
    hosts = sorted(
        {host_of(u) for u in urls} | {p.name for p in site.iterdir() if p.is_dir()} | {ARCHIVE_HOST}
    )
    with tempfile.TemporaryDirectory() as tmp:
        ca, cert, key = make_certificates(Path(tmp), hosts)
        with serve_site(site, traps, cert, key, web_dir / "wayback") as server:
            port = server.server_address[1]
            fetch = web.fetch.model_copy(
                update={
                    "resolve": {"*.example": f"127.0.0.1:{port}"},
                    "allow_addresses": ["127.0.0.1/32"],
                    "ca_file": str(ca),
                    "per_host_delay_s": 0.0,
                    "backoff_s": 0.05,  # the 503 trap's retries: a local server needs no pause
                    "read_timeout_s": 2.0,
                    "total_timeout_s": 4.0,
                }
            )
            live = web.model_copy(update={"mode": "live", "fetch": fetch})
            wants = archive_searches(live, events, docs)
            results, recoveries = anyio.run(fetch_documents, live, urls, docs, wants)
    statuses: dict[str, int] = {}
    for result in results.values():
        statuses[result.status] = statuses.get(result.status, 0) + 1
    copies = Counter(r.copy.archive for r in recoveries.values() if r.copy is not None)
    return {
        "events": len(events),
        "urls": len(urls),
        "fetch_statuses": statuses,
        "lost_links": len(recoveries),
        "archived_copies": dict(sorted(copies.items())),
    }
