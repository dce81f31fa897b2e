"""One bad page must not cost the others: undecodable bytes, forbidden characters, a page over
the time limit and deep nesting each end with that page alone, named; a cut-short dump stops
with an error naming the file, the pages read and the last of them."""

from __future__ import annotations

import bz2
import re
import time
from pathlib import Path

import pytest

from builders.drops import Drop
from builders.wikigen.records import Article
from pipelines.errors import SourceFormatError
from pipelines.sources.wiki.dump import read_dump
from tests.support.snapshot import SNAPSHOT_XML

SKIP = ["References", "External links"]


def _pages() -> tuple[bytes, list[bytes], bytes]:
    data = SNAPSHOT_XML.read_bytes()
    head = data[: data.index(b"  <page>")]
    pages = re.findall(rb"  <page>.*?</page>\n", data, flags=re.S)
    return head, pages, b"</mediawiki>\n"


def _title(page: bytes) -> str:
    found = re.search(rb"<title>(.*?)</title>", page)
    assert found
    return found[1].decode()


def _with_text(page: bytes, extra: bytes) -> bytes:
    """``page`` with ``extra`` added to the text of its last revision."""
    at = page.rindex(b"</text>")
    return page[:at] + extra + page[at:]


def _dump(tmp_path: Path, name: str, pages: list[bytes]) -> Path:
    head, _, tail = _pages()
    path = tmp_path / name
    path.write_bytes(head + b"".join(pages) + tail)
    return path


def _split(results: list[Article | Drop]) -> tuple[list[Article], list[Drop]]:
    return (
        [r for r in results if isinstance(r, Article)],
        [r for r in results if isinstance(r, Drop)],
    )


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        (b" caf\xe9 \xff\xfe broken", "bytes that do not decode"),
        (b" a bell \x07 and a null \x00", "characters XML forbids"),
    ],
)
@pytest.mark.parametrize("workers", [1, 2])
def test_a_page_that_does_not_decode_is_dropped_by_name_and_the_rest_are_read(
    tmp_path: Path, bad: bytes, what: str, workers: int
) -> None:
    _, pages, _ = _pages()
    victim = _title(pages[3])
    dump = _dump(tmp_path, "bad.xml", [*pages[:3], _with_text(pages[3], bad), *pages[4:]])
    articles, drops = _split(list(read_dump(dump, skip_sections=SKIP, workers=workers)))
    assert [a.title for a in articles] == [_title(p) for i, p in enumerate(pages) if i != 3]
    assert [(d.item_id, d.reason, d.step) for d in drops] == [(victim, "undecodable", "read")]
    assert victim in drops[0].detail and what in drops[0].detail
    assert drops[0].facts["page_id"] in drops[0].detail


def test_a_page_over_the_time_limit_is_dropped_as_too_slow_and_the_rest_are_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _, pages, _ = _pages()
    heavy = b"\n".join(
        b"== Part %d ==\nSome ''text'' with [[a link]] and {{convert|%d|km}}." % (i, i)
        for i in range(40_000)
    )
    victim = _title(pages[5])
    dump = _dump(tmp_path, "slow.xml", [*pages[:5], _with_text(pages[5], heavy), *pages[6:]])
    results = list(read_dump(dump, skip_sections=SKIP, page_time_limit_s=1.0, slow_page_s=0.5))
    articles, drops = _split(results)
    assert len(articles) == len(pages) - 1
    assert [(d.item_id, d.reason) for d in drops] == [(victim, "too_slow")]
    assert "page time limit of 1 s" in drops[0].detail
    assert any(victim in r.getMessage() for r in caplog.records)  # named in the log as slow


def test_deep_template_nesting_is_read_within_the_limit_and_flagged(tmp_path: Path) -> None:
    _, pages, _ = _pages()
    deep = b"\n== Deep ==\n" + b"{{x|" * 5000 + b"core" + b"}}" * 5000 + b" after.\n"
    victim = _title(pages[2])
    dump = _dump(tmp_path, "deep.xml", [*pages[:2], _with_text(pages[2], deep), *pages[3:]])
    start = time.perf_counter()
    articles, drops = _split(list(read_dump(dump, skip_sections=SKIP, page_time_limit_s=30)))
    assert not drops and len(articles) == len(pages)
    assert time.perf_counter() - start < 30
    page = next(a for a in articles if a.title == victim)
    assert "Deep" in page.outline
    # the parser gives up past its nesting limit, as MediaWiki does; the page says so
    assert page.fidelity.leftover_markup > 0 and "markup tokens left" in page.fidelity.suspect


def test_a_cut_short_bz2_names_the_file_the_pages_read_and_the_last_one(tmp_path: Path) -> None:
    head, pages, tail = _pages()
    # several bz2 streams, ten pages each, as in Wikipedia's multistream dumps; the last is cut
    streams = [bz2.compress(head + b"".join(pages[:10]))]
    streams += [bz2.compress(b"".join(pages[i : i + 10])) for i in range(10, len(pages), 10)]
    streams[-1] = bz2.compress(b"".join(pages[(len(streams) - 1) * 10 :]) + tail)[:100]
    dump = tmp_path / "cut.xml.bz2"
    dump.write_bytes(b"".join(streams))
    seen: list[str] = []
    with pytest.raises(SourceFormatError) as error:
        for result in read_dump(dump, skip_sections=SKIP):
            seen.append(result.title if isinstance(result, Article) else result.item_id)
    message = str(error.value)
    assert "cut.xml.bz2: truncated or corrupt .bz2 data" in message
    assert f"; {len(seen)} pages read before it, the last {seen[-1]!r}" in message
    assert len(seen) == (len(streams) - 1) * 10
