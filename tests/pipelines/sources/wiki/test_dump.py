import bz2
import gzip
import re
from datetime import UTC, datetime

import pytest

from builders.wikigen.select import classify
from pipelines.errors import SourceFormatError
from pipelines.sources.wiki.creation_log import read_creation_log
from pipelines.sources.wiki.dump import read_dump
from tests.support.snapshot import SNAPSHOT_EVENTS, SNAPSHOT_TRAPS, SNAPSHOT_XML

SKIP = ["References", "External links"]


def _read(path, **kwargs):
    return list(read_dump(path, skip_sections=SKIP, **kwargs))


def test_snapshot_selection_keeps_the_events_and_rejects_each_trap_for_its_reason(params):
    articles = list(read_dump(SNAPSHOT_XML, skip_sections=params.wiki.skip_sections))
    verdicts = {a.title: classify(a, params.wiki) for a in articles}
    selected = {title for title, rejection in verdicts.items() if rejection is None}
    assert selected == SNAPSHOT_EVENTS
    for title, reason in SNAPSHOT_TRAPS.items():
        assert verdicts[title].reason == reason, title
    assert len(SNAPSHOT_EVENTS) >= 12


def test_snapshot_events_have_sections_subsections_refs_and_links(params):
    for article in read_dump(SNAPSHOT_XML, skip_sections=params.wiki.skip_sections):
        if article.title not in SNAPSHOT_EVENTS:
            continue
        assert 1000 <= article.word_count <= 3000, article.title
        assert {2, 3} <= {s.level for s in article.sections}, article.title
        assert article.infobox_type and "date" in article.infobox, article.title
        assert {"location", "site", "venue"} & set(article.infobox), article.title
        assert len(article.infobox) >= 6, article.title  # key figures too
        assert len(article.references) >= 5, article.title
        assert all(".example/" in r.url for r in article.references), article.title
        assert article.external_links, article.title
        assert article.created_at.year == 2026, article.title
        assert article.created_at < article.last_revision_at, article.title


def test_created_at_is_the_first_revision_not_the_title():
    renamed = next(a for a in _read(SNAPSHOT_XML) if a.title == "2026 Korvenna tramway strike")
    assert renamed.created_at == datetime(2019, 5, 7, 13, 0, tzinfo=UTC)
    assert renamed.created_at_source == "history"
    assert renamed.last_revision_at.year == 2026


def test_page_urls_come_from_the_siteinfo_base():
    first = _read(SNAPSHOT_XML)[0]
    assert first.url.startswith("https://valdrapedia.example/wiki/")
    assert " " not in first.url


def test_compressed_dump_reads_the_same(tmp_path):
    packed = tmp_path / "export.xml.bz2"
    packed.write_bytes(bz2.compress(SNAPSHOT_XML.read_bytes()))
    assert [a.to_row() for a in _read(packed, read_at=datetime(2026, 1, 1, tzinfo=UTC))] == [
        a.to_row() for a in _read(SNAPSHOT_XML, read_at=datetime(2026, 1, 1, tzinfo=UTC))
    ]


def test_malformed_xml_names_the_file_and_line(tmp_path):
    broken = tmp_path / "broken.xml"
    lines = SNAPSHOT_XML.read_text().splitlines()
    lines[40] = "<page><title>Unclosed"
    broken.write_text("\n".join(lines))
    with pytest.raises(SourceFormatError, match=r"broken\.xml: malformed XML at line \d+"):
        _read(broken)


def _cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _bad_deflate_block(data: bytes) -> bytes:
    return data[:10] + b"\xff" + data[11:]  # first block after the gzip header: invalid type


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("cut.xml.bz2", lambda xml: _cut(bz2.compress(xml))),
        ("cut.xml.gz", lambda xml: _cut(gzip.compress(xml))),
        ("plain.xml.gz", lambda xml: xml),  # not gzipped at all
        ("plain.xml.bz2", lambda xml: xml),
        ("bad-block.xml.gz", lambda xml: _bad_deflate_block(gzip.compress(xml))),
    ],
)
def test_truncated_or_corrupt_compressed_dump_names_the_file(tmp_path, name, damage):
    dump = tmp_path / name
    dump.write_bytes(damage(SNAPSHOT_XML.read_bytes()))
    pattern = re.escape(name) + r": truncated or corrupt \.(bz2|gz) data .*\(by line \d+\)"
    with pytest.raises(SourceFormatError, match=pattern):
        _read(dump)


def test_truncated_dump_names_the_file_with_parallel_workers(tmp_path):
    dump = tmp_path / "cut.xml.gz"
    dump.write_bytes(_cut(gzip.compress(SNAPSHOT_XML.read_bytes())))
    with pytest.raises(SourceFormatError, match=r"cut\.xml\.gz: truncated or corrupt \.gz data"):
        _read(dump, workers=2, batch_pages=3)


def test_revision_without_timestamp_names_the_file_and_page(tmp_path):
    bad = tmp_path / "no-time.xml"
    text = SNAPSHOT_XML.read_text()
    start = text.index("<timestamp>")
    end = text.index("</timestamp>") + len("</timestamp>")
    bad.write_text(text[:start] + text[end:])
    with pytest.raises(
        SourceFormatError,
        match=r"no-time\.xml: page '.+': bad revision \(missing or empty timestamp\)",
    ):
        _read(bad)


def test_page_without_title_is_reported_with_the_file(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text(
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/"><page><ns>0</ns>'
        "<id>5</id></page></mediawiki>"
    )
    with pytest.raises(SourceFormatError, match=r"bad\.xml: a <page> without <title>"):
        _read(bad)


LOG = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/">
  <logitem><id>1</id><timestamp>2019-05-07T13:00:00Z</timestamp><type>create</type>
    <action>create</action><logtitle>Korvenna tramway strike</logtitle></logitem>
  <logitem><id>2</id><timestamp>2026-03-04T09:12:00Z</timestamp><type>create</type>
    <action>create</action><logtitle>2026 Meridal River floods</logtitle></logitem>
  <logitem><id>3</id><timestamp>2026-03-05T09:12:00Z</timestamp><type>delete</type>
    <action>delete</action><logtitle>Cyclone Imre</logtitle></logitem>
</mediawiki>
"""


def test_creation_log_keeps_in_window_creations_only(tmp_path):
    log_path = tmp_path / "logging.xml"
    log_path.write_text(LOG)
    created = read_creation_log(log_path, since=datetime(2026, 1, 1, tzinfo=UTC))
    assert created == {"2026 Meridal River floods": datetime(2026, 3, 4, 9, 12, tzinfo=UTC)}


def test_parallel_workers_give_the_same_records_in_the_same_order():
    fixed = datetime(2026, 1, 1, tzinfo=UTC)
    one = [a.to_row() for a in _read(SNAPSHOT_XML, read_at=fixed)]
    two = [a.to_row() for a in _read(SNAPSHOT_XML, read_at=fixed, workers=2, batch_pages=7)]
    assert two == one


def test_bad_timestamp_names_the_file_and_line(tmp_path):
    bad = tmp_path / "bad-time.xml"
    bad.write_text(SNAPSHOT_XML.read_text().replace("2026-03-04T09:12:00Z", "4 March 2026", 1))
    with pytest.raises(
        SourceFormatError,
        match=r"bad-time\.xml: page '2026 Meridal River floods': bad revision .*4 March 2026.* \(by line \d+\)",
    ):
        _read(bad)


def test_malformed_creation_log_names_the_file(tmp_path):
    log_path = tmp_path / "logging.xml"
    log_path.write_text(LOG[:200])
    with pytest.raises(SourceFormatError, match=r"logging\.xml: malformed XML at line \d+"):
        read_creation_log(log_path, since=datetime(2026, 1, 1, tzinfo=UTC))


def test_history_dates_on_a_dump_without_history_are_flagged(tmp_path, caplog):
    one_revision = tmp_path / "pages-articles.xml"
    text = SNAPSHOT_XML.read_text()
    head, _, rest = text.partition("  <page>")
    page = "  <page>" + rest.split("</page>\n", 1)[0] + "</page>\n"
    revisions = page.count("<revision>")
    assert revisions == 2
    first_revision_end = page.index("</revision>") + len("</revision>\n")
    page = page[: page.index("    <revision>")] + page[first_revision_end:]
    one_revision.write_text(head + page + "</mediawiki>\n")
    assert len(_read(one_revision)) == 1
    assert "every page has a single revision" in caplog.text
    caplog.clear()
    _read(SNAPSHOT_XML)
    assert "single revision" not in caplog.text


@pytest.mark.parametrize(
    ("stamp", "problem"),
    [("", "missing or empty timestamp"), ("<timestamp>yesterday</timestamp>", "yesterday")],
)
def test_creation_log_item_without_a_readable_timestamp_names_the_file_and_log_id(
    tmp_path, stamp, problem
):
    log_path = tmp_path / "logging.xml"
    log_path.write_text(LOG.replace("<timestamp>2026-03-04T09:12:00Z</timestamp>", stamp))
    with pytest.raises(
        SourceFormatError, match=rf"logging\.xml: log item 2: bad timestamp \(.*{problem}"
    ):
        read_creation_log(log_path, since=datetime(2026, 1, 1, tzinfo=UTC))


def test_truncated_creation_log_names_the_file(tmp_path):
    log_path = tmp_path / "logging.xml.gz"
    log_path.write_bytes(_cut(gzip.compress(LOG.encode())))
    with pytest.raises(SourceFormatError, match=r"logging\.xml\.gz: truncated or corrupt \.gz"):
        read_creation_log(log_path, since=datetime(2026, 1, 1, tzinfo=UTC))


def test_the_snapshot_page_of_real_world_constructs_renders_cleanly():
    """The snapshot's page written with what real articles carry (see snapshot/wiki/README.md)."""
    page = next(a for a in _read(SNAPSHOT_XML) if a.title == "2026 Brannock dockworkers' strike")
    assert page.summary.startswith(
        "The 2026 Brannock dockworkers' strike (Swedish: Brannockstrejken) was a stoppage of "
        "work by about 1,900 dock workers along 3.2 kilometres of quays at the Port of Brannock "
        "from 9–21 February 2026."
    )
    assert "2.4 × 10^6 tonnes" in page.summary
    # the unclosed '' before "Background" swallows no heading
    assert page.outline == ["Background", "Strike", "First week", "Talks", "Settlement"]
    assert page.fidelity.source_headings == page.fidelity.headings == 7
    assert not page.fidelity.suspect
    text = "\n".join([page.summary, *(s.text for s in page.sections)])
    assert "About 2/3 of the workforce" in text and "(c. 1961–)" in text
    assert "{{placeholder}}" in text  # <nowiki> shows markup as text, on purpose
    assert "thumb" not in text and "Ships waiting" not in text and "()" not in text
    assert page.infobox["date"] == "9 February 2026 – 21 February 2026"
    assert page.infobox["leadfigures1"] == "Aino Rask; Tomas Verhoek"
    assert [r.name for r in page.references] == ["herald", "", ""]
    assert all(r.url.startswith("https://www.") for r in page.references)
