"""The snapshot's web side: recorded by the live code against a local HTTPS copy of the web,
then replayed by the web stage with no network at all."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.settings import Params
from pipelines.snapshot.record import record_web
from pipelines.stages.web import run_web
from pipelines.stages.wiki import run_wiki
from pipelines.stages.wikigen import run_wikigen
from tests.support.snapshot import ROOT, SNAPSHOT_EVENTS

pytestmark = pytest.mark.integration

WEB = ROOT / "snapshot" / "web"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Params, Path]:
    """Record the snapshot afresh into a temporary archive and search log."""
    from pipelines.settings import load_params

    tmp = tmp_path_factory.mktemp("web")
    params = load_params(ROOT / "params.yaml")
    sources = params.web.model_copy(
        update={"archive": tmp / "archive", "search_log": tmp / "search.jsonl", "mode": "live"}
    )
    params = params.model_copy(update={"web": sources})
    # recording replaces the archive it names: never the project's own
    assert params.web.archive == tmp / "archive" and params.web.search_log.parent == tmp
    summary = record_web(params, WEB)
    assert summary["events"] == len(SNAPSHOT_EVENTS)
    return params.model_copy(update={"web": sources.model_copy(update={"mode": "replay"})}), tmp


@pytest.fixture(scope="module")
def documents(recorded, no_network_module):
    params, tmp = recorded
    run_wiki(params.wiki, out=tmp / "wiki")
    with no_network_module() as attempts:
        run_web(params.web, articles=tmp / "wiki" / "articles.parquet", out=tmp / "out")
    assert attempts == []
    return pq.read_table(tmp / "out" / "documents.parquet").to_pylist()


def test_every_trap_ends_in_its_status(documents):
    by_url = {d["url"]: d for d in documents}
    traps = [line for line in (WEB / "pages.jsonl").read_text().splitlines() if '"trap"' in line]
    assert len(traps) >= 5
    statuses = Counter(d["status"] for d in documents)
    for status in (
        "ok",
        "dead",
        "timeout",
        "error",
        "robots",
        "not_html",
        "too_short",
        "duplicate",
        "mirror",
    ):
        assert statuses[status] > 0, (status, statuses)
    gone = next(d for d in documents if d["http_status"] == 410)
    assert gone["status"] == "dead"
    amp = next(d for u, d in by_url.items() if u.startswith("https://amp."))
    assert amp["status"] == "duplicate" and "same text" in amp["reason"]


def test_every_event_has_human_and_search_documents(documents):
    for event in {d["event_id"] for d in documents}:
        ok = Counter(
            d["origin"] for d in documents if d["event_id"] == event and d["status"] == "ok"
        )
        assert ok["human"] >= 4 and ok["search"] >= 1, (event, ok)


def test_boilerplate_is_stripped(documents):
    for doc in documents:
        if doc["status"] == "ok":
            assert "cookie" not in doc["text"].casefold()[:200], doc["url"]
            assert doc["word_count"] >= 50


def test_entries_follow_from_documents(recorded, documents):
    params, tmp = recorded
    run_wikigen(
        params.wikigen,
        articles=tmp / "wiki" / "articles.parquet",
        documents=tmp / "out" / "documents.parquet",
        out=tmp / "entries",
    )
    entries = pq.read_table(tmp / "entries" / "entries.parquet").to_pylist()
    assert {e["title"] for e in entries} == SNAPSHOT_EVENTS
    ok = sum(1 for d in documents if d["status"] == "ok")
    assert sum(len(e["documents"]) for e in entries) == ok
    assert {e["split"] for e in entries} <= {"train", "test"}
    assert sum(sum(c["count"] for c in e["document_counts"]) for e in entries) == len(documents)


def test_some_dead_links_come_back_from_the_archive_stand_in(documents):
    archived = [d for d in documents if d["archived"]]
    assert Counter(d["archive"] for d in archived) == {"wayback": 9, "citation": 3}
    assert all(d["status"] == "ok" and d["origin"] == "human" for d in archived)
    assert all(d["final_url"].startswith("https://web.archive.example/web/") for d in archived)
    # two copies of situation report no. 4: the one closest to its access date (7 March) wins
    report = next(d for d in archived if d["url"].endswith("meridal-valley-situation-report-4"))
    assert report["memento_at"].date().isoformat() == "2026-03-07"
    assert "superseded" not in report["text"]
    lost = [d for d in documents if d["origin"] == "human" and d["status"] == "dead"]
    assert lost and all("no archived copy: wayback: no snapshot" in d["reason"] for d in lost)
