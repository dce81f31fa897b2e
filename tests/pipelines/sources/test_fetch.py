"""The fetcher against misbehaving local servers: every URL ends in the right status."""

from __future__ import annotations

import anyio
import pytest

from pipelines.retry import retry_after_s
from pipelines.settings import FetchSettings
from pipelines.sources.fetch import STATUSES, Fetcher
from pipelines.sources.replay import ReplayFetcher, load_index
from pipelines.sources.warc_archive import WarcArchive, read_archive
from tests.support.fault_server import fault_server


def _settings(**overrides) -> FetchSettings:
    values = {
        "contact": "ops@benchsmith.example",
        "per_host_delay_s": 0,
        "read_timeout_s": 1.0,
        "total_timeout_s": 2.0,
        "max_bytes": 200_000,
        "retries": 2,
        "backoff_s": 0.01,
        "allow_addresses": ["127.0.0.1/32"],
        "resolve": {"*.example": "127.0.0.1"},
    }
    values.update(overrides)
    return FetchSettings(**values)


def _run(urls, settings=None, archive=None):
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def main():
        async with Fetcher(settings or _settings(), archive, sleep=sleep) as fetcher:
            return await fetcher.fetch_all(urls)

    return anyio.run(main), waits


FAULTS = {
    "/ok": ("ok", 200),
    "/gzipped": ("ok", 200),
    "/hop": ("ok", 200),
    "/missing": ("dead", 404),
    "/gone": ("dead", 410),
    "/broken": ("error", 500),
    "/unavailable": ("error", 503),
    "/throttled": ("ok", 200),
    "/flaky": ("ok", 200),
    "/slow": ("timeout", None),
    "/endless": ("too_large", None),
    "/bomb": ("too_large", 200),
    "/loop-a": ("error", None),
    "/to-private": ("blocked_address", None),
    "/private/page": ("robots", None),
    "/report.pdf": ("not_html", 200),
    "/latin1": ("ok", 200),
}


@pytest.fixture(scope="module")
def fault_matrix():
    with fault_server() as server, fault_server("127.0.0.2") as private:
        private.private_url = ""
        server.private_url = f"http://127.0.0.2:{private.server_address[1]}/secret"
        base = f"http://news.example:{server.server_address[1]}"
        urls = [base + path for path in FAULTS]
        results, waits = _run(urls)
        yield dict(zip(FAULTS, results, strict=True)), waits, server, private


def test_every_url_ends_in_the_expected_status(fault_matrix):
    results, _, _, _ = fault_matrix
    for path, (status, http_status) in FAULTS.items():
        result = results[path]
        assert (result.status, result.http_status) == (status, http_status), (path, result)
        assert result.status in STATUSES and result.reason


def test_nothing_reaches_a_private_address(fault_matrix):
    results, _, _, private = fault_matrix
    assert private.requests == []
    assert "127.0.0.2" in results["/to-private"].reason


def test_server_errors_are_retried_then_reported(fault_matrix):
    results, _, server, _ = fault_matrix
    assert results["/broken"].attempts == 3
    assert [p for p, _ in server.requests].count("/broken") == 3
    assert results["/flaky"].attempts == 2


def test_retry_after_is_honoured(fault_matrix):
    results, waits, _, _ = fault_matrix
    assert results["/throttled"].attempts == 2
    assert 2.0 in waits


def test_robots_is_read_once_and_the_disallowed_page_never_requested(fault_matrix):
    _, _, server, _ = fault_matrix
    paths = [p for p, _ in server.requests]
    assert paths.count("/robots.txt") == 1
    assert "/private/page" not in paths
    assert all(agent.startswith("benchsmith/") for _, agent in server.requests)


def test_redirects_are_followed_and_loops_stopped(fault_matrix):
    results, _, _, _ = fault_matrix
    assert results["/hop"].final_url.endswith("/ok")
    assert "redirect loop" in results["/loop-a"].reason


def test_text_is_decoded_despite_a_broken_charset(fault_matrix):
    results, _, _, _ = fault_matrix
    assert "Caf\u00e9 na\u00efve" in results["/latin1"].text
    assert "A fine page." in results["/gzipped"].text


def test_loopback_is_refused_unless_allowed():
    with fault_server() as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/ok"
        results, _ = _run([url], _settings(allow_addresses=[], resolve={}))
    assert results[0].status == "blocked_address"
    assert server.requests == []


def test_archive_keeps_every_exchange_and_outcome(tmp_path):
    archive = WarcArchive(tmp_path / "raw")
    with fault_server() as server:
        base = f"http://news.example:{server.server_address[1]}"
        results, _ = _run([base + "/ok", base + "/slow", base + "/flaky"], archive=archive)
    archive.close()
    recorded = dict(read_archive(tmp_path / "raw"))
    assert {u.rsplit("/", 1)[-1] for u in recorded} == {"ok", "slow", "flaky"}
    ok = recorded[base + "/ok"]
    assert ok.outcome["status"] == "ok" and b"A fine page." in ok.body
    assert recorded[base + "/slow"].outcome["status"] == "timeout"
    assert recorded[base + "/flaky"].outcome["attempts"] == 2
    assert [r.status for r in results] == ["ok", "timeout", "ok"]


def test_retry_after_parses_seconds_and_dates():
    assert retry_after_s("7") == 7.0
    assert retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_s("soon") is None


def test_replay_serves_the_archive_without_network(tmp_path, no_network):
    archive = WarcArchive(tmp_path / "raw")
    with fault_server() as server:
        base = f"http://news.example:{server.server_address[1]}"
        live, _ = _run([base + "/gzipped", base + "/missing"], archive=archive)
    archive.close()

    async def replay():
        async with ReplayFetcher(tmp_path / "raw") as fetcher:
            return await fetcher.fetch_all([base + "/gzipped", base + "/missing", base + "/new"])

    with no_network():
        replayed = anyio.run(replay)
    assert [(r.status, r.text) for r in replayed[:2]] == [(r.status, r.text) for r in live]
    assert "A fine page." in replayed[0].text
    assert replayed[2].status == "error" and "not in the archive" in replayed[2].reason


def test_archive_cut_short_keeps_its_complete_records(tmp_path):
    archive = WarcArchive(tmp_path / "raw")
    with fault_server() as server:
        base = f"http://news.example:{server.server_address[1]}"
        _run([base + "/ok"], archive=archive)
        _run([base + "/gone"], archive=archive)
    archive.close()
    (only,) = list((tmp_path / "raw").glob("*.warc.gz"))
    data = only.read_bytes()
    only.write_bytes(data[: len(data) - 40])  # a run killed while writing
    index = load_index(tmp_path / "raw")
    assert index[base + "/ok"].status == "ok"
    assert base + "/gone" not in index
