"""Replay applies the live fetcher's caps and checks to archived bodies: a decompression bomb is
``too_large`` without being inflated, a binary body is ``binary``."""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path

import anyio

from pipelines.sources.web.fetch import FetchResult
from pipelines.sources.web.replay import ReplayFetcher, load_index
from pipelines.sources.web.settings import FetchSettings
from pipelines.sources.web.warc_archive import WarcArchive
from tests.support.fault_server import ARTICLE, PNG

URL = "http://news.example/page"
CAP = FetchSettings(max_bytes=1_000_000)


def _archived_ok(folder: Path, body: bytes, encoding: str = "") -> None:
    """An archive holding one ``ok`` fetch of ``body`` (as a run with a larger cap, or an
    older version, would have recorded it)."""
    archive = WarcArchive(folder)
    headers = [("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", encoding)]
    record_id = archive.write_exchange(URL, [], "200 OK", headers, body)
    outcome = FetchResult(
        URL, "ok", "fetched", final_url=URL, http_status=200, content_type="text/html",
        content_encoding=encoding, charset="utf-8", response_record=record_id,
    ).outcome()  # fmt: skip
    archive.write_outcome(URL, outcome)
    archive.close()


def _peak_index(folder: Path, fetch: FetchSettings) -> tuple[FetchResult, int]:
    """The replayed result for :data:`URL` and the peak of Python allocations reading it."""
    tracemalloc.start()
    try:
        index = load_index(folder, fetch)
        return index[URL], tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_gzip_bomb_replays_as_too_large_without_being_inflated(tmp_path):
    bomb = gzip.compress(b"a" * (1 << 20)) * 200  # 200 MB in 205 KB of gzip members
    _archived_ok(tmp_path / "raw", bomb, "gzip")
    result, peak = _peak_index(tmp_path / "raw", CAP)
    assert (result.status, result.text) == ("too_large", "")
    assert result.reason == "more than 1000000 bytes once decompressed"  # as the live fetcher
    assert peak < 4_000_000  # inflated whole, it took 878 MB


def test_a_record_that_inflates_past_the_cap_is_never_held_whole(tmp_path):
    _archived_ok(tmp_path / "raw", b"<p>" + b"a" * (24 << 20))  # a 24 MB body, 24 KB archived
    result, peak = _peak_index(tmp_path / "raw", CAP)
    assert (result.status, result.reason) == ("too_large", "more than 1000000 bytes")
    assert peak < 18_000_000  # warcio's buffers, not the 24 MB body (65 MB before)


def test_replay_applies_the_cap_it_is_given(tmp_path):
    _archived_ok(tmp_path / "raw", gzip.compress(ARTICLE), "gzip")
    roomy = load_index(tmp_path / "raw")[URL]
    assert roomy.status == "ok" and "river rose" in roomy.text
    tight = load_index(tmp_path / "raw", FetchSettings(max_bytes=len(ARTICLE) - 1))[URL]
    assert tight.status == "too_large" and tight.text == ""
    assert (tight.http_status, tight.final_url) == (200, URL)  # the rest of the outcome stays


def test_an_archived_binary_body_replays_as_binary(tmp_path, no_network):
    _archived_ok(tmp_path / "raw", PNG)

    async def replay() -> list[FetchResult]:
        async with ReplayFetcher(tmp_path / "raw", CAP) as fetcher:
            return await fetcher.fetch_all([URL])

    with no_network():
        (result,) = anyio.run(replay)
    assert (result.status, result.text) == ("binary", "")
    assert result.reason == f"{URL} sent PNG image, labelled text/html"
