"""The search log: append, replay by (provider, query), and clear errors on bad lines."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import pytest

from pipelines.errors import MissingInputError, SourceFormatError
from pipelines.sources.web.search import (
    RecordedProvider,
    SearchHit,
    SearchLog,
    read_hits,
    recorded_queries,
)
from pipelines.sources.web.search.recorded import NoHits, read_entries

WHEN = datetime(2026, 10, 1, 12, 0, tzinfo=UTC)


def _hits(query: str, n: int, provider: str = "google_cse", host: str = "a") -> list[SearchHit]:
    return [
        SearchHit(query, provider, i, f"https://{host}{i}.example/", f"T{i}", f"S{i}", WHEN)
        for i in range(1, n + 1)
    ]


def test_search_log_writes_one_json_object_per_hit(tmp_path):
    path = tmp_path / "web" / "search.jsonl"
    assert SearchLog(path).append(_hits("q", 2)) == 2
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert rows[0] == {
        "query": "q",
        "provider": "google_cse",
        "rank": 1,
        "url": "https://a1.example/",
        "title": "T1",
        "snippet": "S1",
        "retrieved_at": "2026-10-01T12:00:00+00:00",
    }
    assert read_hits(path) == _hits("q", 2)


def test_search_log_redacts_secrets_but_keeps_ordinary_key_parameters(tmp_path):
    path = tmp_path / "search.jsonl"
    hit = SearchHit(
        "q", "p", 1, "https://a.example/?key=article-7", "sk-SECRET", "x sk-SECRET", WHEN
    )
    SearchLog(path, secrets=["sk-SECRET", ""]).append([hit])
    (row,) = read_hits(path)
    assert (row.title, row.snippet) == ("REDACTED", "x REDACTED")
    assert row.url == "https://a.example/?key=article-7"


def test_recorded_replays_in_rank_order_and_caps_num(tmp_path):
    path = tmp_path / "search.jsonl"
    SearchLog(path).append(list(reversed(_hits("q", 3))) + _hits("other", 1))
    replay = RecordedProvider(path)
    assert [h.rank for h in replay.search("q", num=10)] == [1, 2, 3]
    assert [h.rank for h in replay.search("q", num=2)] == [1, 2]
    assert recorded_queries(path) == ["q", "other"]


def test_recorded_unknown_query_returns_nothing_and_says_so(tmp_path, caplog):
    path = tmp_path / "search.jsonl"
    SearchLog(path).append(_hits("known", 2))
    replay = RecordedProvider(path)
    with caplog.at_level(logging.DEBUG, logger="pipelines.sources.web.search.recorded"):
        assert replay.search("never asked", num=10) == []
    assert "never asked" in caplog.text
    assert replay.knows("known") and not replay.knows("never asked")


def test_recorded_matches_on_provider_and_query(tmp_path):
    path = tmp_path / "search.jsonl"
    SearchLog(path).append(_hits("q", 2, provider="google_cse", host="g"))
    SearchLog(path).append(_hits("q", 1, provider="snapshot_site", host="s"))
    assert RecordedProvider(path, provider="google_cse").search("q", num=10) == _hits(
        "q", 2, provider="google_cse", host="g"
    )
    assert not RecordedProvider(path, provider="bing").knows("q")
    # no provider named: the latest recording of the query
    assert RecordedProvider(path).search("q", num=10) == _hits("q", 1, "snapshot_site", "s")


def test_recorded_query_recorded_again_replaces_earlier_hits(tmp_path):
    path = tmp_path / "search.jsonl"
    SearchLog(path).append(_hits("q", 3, host="old"))
    SearchLog(path).append(_hits("q", 2, host="new"))
    assert RecordedProvider(path).search("q", num=10) == _hits("q", 2, host="new")


def test_recorded_add_extends_the_replay_index(tmp_path):
    replay = RecordedProvider(tmp_path / "not-yet.jsonl")
    assert replay.search("q", num=5) == [] and not replay.knows("q")
    replay.add(_hits("q", 2))
    assert replay.knows("q") and replay.search("q", num=5) == _hits("q", 2)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "malformed"),
        ('["a list"]', "expected a JSON object"),
        ('{"query": "q"}', "missing provider"),
        (
            '{"query": "q", "provider": "p", "rank": 0, "url": "u", "title": "", "snippet": "", "retrieved_at": "2026-10-01T12:00:00+00:00"}',
            "rank must be",
        ),
        (
            '{"query": "q", "provider": "p", "rank": 1, "url": "u", "title": "", "snippet": "", "retrieved_at": "yesterday"}',
            "Invalid isoformat",
        ),
        (
            '{"query": "q", "provider": "p", "no_hits": false, "retrieved_at": "2026-10-01"}',
            "no_hits must be true",
        ),
        ('{"query": "q", "provider": "p", "no_hits": true}', "missing retrieved_at"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, line, reason):
    path = tmp_path / "search.jsonl"
    SearchLog(path).append(_hits("q", 1))
    with path.open("a", encoding="utf-8") as f:
        f.write("\n" + line + "\n")
    with pytest.raises(SourceFormatError, match=reason) as info:
        RecordedProvider(path)
    assert f"{path}:3:" in str(info.value)


def test_read_hits_of_a_missing_log_is_a_missing_input(tmp_path):
    with pytest.raises(MissingInputError, match=r"nowhere\.jsonl"):
        read_hits(tmp_path / "nowhere.jsonl")


def _torn(path, query="torn"):
    """A log whose last line was cut off mid-write, as a killed run leaves it."""
    SearchLog(path).append(_hits("q", 2))
    line = json.dumps(SearchLog(path)._row(_hits(query, 1)[0]))
    with path.open("a", encoding="utf-8") as f:
        f.write(line[: len(line) // 2])


def test_torn_last_line_is_skipped_with_a_warning(tmp_path, caplog):
    path = tmp_path / "search.jsonl"
    _torn(path)
    with caplog.at_level(logging.WARNING, logger="pipelines.sources.web.search.recorded"):
        assert read_hits(path) == _hits("q", 2)
        assert RecordedProvider(path).search("q", num=5) == _hits("q", 2)
    assert f"{path}:3: skipping a torn last line" in caplog.text
    assert not RecordedProvider(path).knows("torn")


def test_torn_multibyte_character_at_the_end_is_skipped(tmp_path):
    path = tmp_path / "search.jsonl"
    SearchLog(path).append(_hits("q", 1))
    with path.open("ab") as f:
        f.write('{"query": "caf\u00e9'.encode()[:-1])  # half of the UTF-8 "é"
    assert read_hits(path) == _hits("q", 1)


def test_append_after_a_torn_line_starts_on_a_fresh_line(tmp_path, caplog):
    path = tmp_path / "search.jsonl"
    _torn(path)
    with caplog.at_level(logging.WARNING, logger="pipelines.sources.web.search.recorded"):
        assert SearchLog(path).append(_hits("next", 1)) == 1
    assert "cutting off a torn last line" in caplog.text
    assert read_hits(path) == _hits("q", 2) + _hits("next", 1)
    assert len(path.read_text("utf-8").splitlines()) == 3


def test_append_keeps_a_whole_last_record_that_lacks_its_newline(tmp_path):
    path = tmp_path / "search.jsonl"
    path.write_text(json.dumps(SearchLog(path)._row(_hits("q", 1)[0])), "utf-8")
    SearchLog(path).append(_hits("next", 1))
    assert read_hits(path) == _hits("q", 1) + _hits("next", 1)


def test_malformed_line_before_the_last_is_still_an_error(tmp_path):
    path = tmp_path / "search.jsonl"
    SearchLog(path).append(_hits("q", 1))
    with path.open("a", encoding="utf-8") as f:
        f.write('{"query": "q", "prov\n')
    SearchLog(path).append(_hits("next", 1))  # the torn line ended in a newline: not cut
    with pytest.raises(SourceFormatError, match="malformed") as info:
        read_hits(path)
    assert f"{path}:2:" in str(info.value)


def test_query_without_hits_is_recorded_as_asked(tmp_path):
    path = tmp_path / "search.jsonl"
    assert SearchLog(path).append([]) == 0 and not path.exists()  # nothing said, nothing written
    SearchLog(path).append(_hits("q", 1))
    assert SearchLog(path).append([], query="nothing", provider="google_cse") == 0
    row = json.loads(path.read_text("utf-8").splitlines()[-1])
    assert row.keys() == {"query", "provider", "no_hits", "retrieved_at"}
    assert (row["query"], row["provider"], row["no_hits"]) == ("nothing", "google_cse", True)
    assert datetime.fromisoformat(row["retrieved_at"]).tzinfo is not None
    # not a hit, but a query asked
    assert read_hits(path) == _hits("q", 1)
    assert [type(e) for e in read_entries(path)] == [SearchHit, NoHits]
    assert recorded_queries(path) == ["q", "nothing"]
    for replay in (RecordedProvider(path), RecordedProvider(path, provider="google_cse")):
        assert replay.knows("nothing") and replay.search("nothing", num=5) == []
    assert not RecordedProvider(path, provider="bing").knows("nothing")


def test_no_hits_marker_replaces_earlier_hits_and_later_hits_replace_it(tmp_path):
    path = tmp_path / "search.jsonl"
    SearchLog(path).append(_hits("q", 2))
    SearchLog(path).append([], query="q", provider="google_cse")
    assert RecordedProvider(path).search("q", num=5) == []
    assert RecordedProvider(path).knows("q")
    SearchLog(path).append(_hits("q", 1, host="new"))
    assert RecordedProvider(path).search("q", num=5) == _hits("q", 1, host="new")


def test_no_hits_marker_is_redacted(tmp_path):
    path = tmp_path / "search.jsonl"
    SearchLog(path, secrets=["sk-SECRET"]).append([], query="q sk-SECRET", provider="p")
    assert "sk-SECRET" not in path.read_text("utf-8")
    assert recorded_queries(path) == ["q REDACTED"]


def test_recorded_add_of_a_query_without_hits_makes_it_known(tmp_path):
    replay = RecordedProvider(tmp_path / "not-yet.jsonl")
    replay.add([], query="q", provider="google_cse")
    assert replay.knows("q") and replay.search("q", num=5) == []
    replay.add([])
    assert not replay.knows("other")
