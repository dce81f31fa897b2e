"""Candidate-first reading of a multistream dump: the same records as a full scan for the
candidates, from their streams only."""

from __future__ import annotations

import bz2
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipelines.errors import SourceFormatError
from pipelines.sources.wiki.dump import read_dump
from pipelines.sources.wiki.multistream import StreamStats, candidate_pages, find_in_index
from tests.support.multistream import filler_page, split_export, write_multistream
from tests.support.snapshot import SNAPSHOT_XML

PER_STREAM = 10
AT = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def multistream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[bytes]]:
    """The snapshot's pages among 300 filler pages, as a multistream dump and index."""
    header, real = split_export(SNAPSHOT_XML)
    pages = [filler_page(100_000 + i, f"Filler {i}") for i in range(300)]
    for k, page in enumerate(real):  # spread the real pages over the dump
        pages.insert(7 * k + 3, page)
    folder = tmp_path_factory.mktemp("multistream")
    dump, index = folder / "dump-multistream.xml.bz2", folder / "index.txt.bz2"
    write_multistream(header, pages, dump, index, per_stream=PER_STREAM)
    return dump, index, real


def rows(records) -> dict[str, dict]:
    return {r.title: r.to_row() for r in records}


def test_candidates_read_from_their_streams_equal_a_full_scan(multistream) -> None:
    dump, index, real = multistream
    full = rows(read_dump(dump, creation_dates="log", read_at=AT))
    titles = sorted(t for t in full if not t.startswith("Filler"))[::3]
    lookup = find_in_index(index, [*titles, "No such page"])
    assert lookup.missing == ["No such page"]
    stats = StreamStats()
    found = rows(
        read_dump(
            dump, creation_dates="log", read_at=AT, pages=candidate_pages(dump, lookup, stats)
        )
    )
    assert found == {t: full[t] for t in titles}
    # only the streams holding a candidate were decompressed
    assert stats.streams_read == len(lookup.streams) < len(real) + 300 // PER_STREAM
    assert stats.pages_read == len(titles)
    assert stats.pages_seen <= stats.streams_read * PER_STREAM


def test_the_index_is_wikimedias_offset_id_title_lines(multistream) -> None:
    dump, index, _ = multistream
    lines = bz2.decompress(index.read_bytes()).decode().splitlines()
    offsets = sorted({int(line.split(":", 2)[0]) for line in lines})
    assert all(int(line.split(":", 2)[1]) > 0 for line in lines)
    data = dump.read_bytes()
    assert all(data[o : o + 3] == b"BZh" for o in offsets)
    assert bz2.decompress(data).count(b"<page>") == len(lines)


def test_a_bad_index_line_or_offset_names_the_file(tmp_path: Path, multistream) -> None:
    dump, _, _ = multistream
    bad = tmp_path / "index.txt"
    bad.write_text("12:34:Fine\nnot a line\n")
    with pytest.raises(SourceFormatError, match=r"index.txt:2: not an 'offset:page_id:title'"):
        find_in_index(bad, ["Fine"])
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("5:1:Somewhere\n")
    with pytest.raises(SourceFormatError, match="no bz2 stream at byte 5"):
        list(candidate_pages(dump, find_in_index(wrong, ["Somewhere"])))
