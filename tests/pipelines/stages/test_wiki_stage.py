import json
import os
import subprocess
import time
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest

from builders.drops import DROP_SCHEMA, Drop
from builders.wikigen.records import ARTICLE_SCHEMA, Article
from pipelines.errors import SourceFormatError
from pipelines.outputs import OutputInUseError
from pipelines.sources.wiki.dump import read_dump
from pipelines.stage_run import stage_run
from pipelines.stages.wiki import run_wiki
from tests.support.snapshot import SNAPSHOT_EVENTS, SNAPSHOT_XML


def test_stage_writes_articles_rejections_and_stats(tmp_path, params):
    out = tmp_path / "wiki"
    stats = run_wiki(params.wiki, out=out)

    articles = pq.read_table(out / "articles.parquet")
    rejected = pq.read_table(out / "drops.parquet")
    assert articles.schema.equals(ARTICLE_SCHEMA, check_metadata=False)
    assert rejected.schema.equals(DROP_SCHEMA, check_metadata=False)
    drops = [Drop.from_row(r) for r in rejected.to_pylist()]
    assert {(d.stage, d.kind) for d in drops} == {("wiki", "page")}
    assert {d.step for d in drops} == {"content", "window"}
    # the page's own facts travel with the drop: its id, URL and creation time
    windowed = next(d for d in drops if d.reason == "created_before_window")
    assert windowed.facts["page_id"].isdigit() and windowed.facts["url"].startswith("http")
    assert windowed.facts["created_at"][:10] in windowed.detail
    assert set(articles.column("title").to_pylist()) == SNAPSHOT_EVENTS

    saved = json.loads((out / "stats.json").read_text())
    assert saved["counts"]["selected"] == articles.num_rows == stats.counts["selected"]
    assert saved["counts"]["read"] == articles.num_rows + rejected.num_rows
    reasons = rejected.column("reason").to_pylist()
    assert saved["dropped"] == {r: reasons.count(r) for r in set(reasons)}
    assert [p.name for p in tmp_path.iterdir()] == ["wiki"]  # no scratch folder left


def test_records_round_trip_through_parquet(tmp_path, params):
    out = tmp_path / "wiki"
    run_wiki(params.wiki, out=out)
    stored = [Article.from_row(r) for r in pq.read_table(out / "articles.parquet").to_pylist()]
    dump = params.wiki.dump
    read = [
        a
        for a in read_dump(
            dump.path, skip_sections=params.wiki.skip_sections, read_at=dump.snapshot_at
        )
        if a.title in SNAPSHOT_EVENTS
    ]
    assert stored == read
    assert all(a.sections and a.references and a.infobox for a in stored)


def test_same_inputs_give_identical_outputs(tmp_path, params):
    run_wiki(params.wiki, out=tmp_path / "a")
    run_wiki(params.wiki, out=tmp_path / "b")
    for name in ("articles.parquet", "drops.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_failed_run_keeps_previous_outputs_and_leaves_no_partial_files(tmp_path, params):
    out = tmp_path / "wiki"
    run_wiki(params.wiki, out=out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    broken = tmp_path / "broken.xml"
    text = SNAPSHOT_XML.read_text()
    broken.write_text(text[: len(text) // 2])  # a dump cut off mid-way
    bad_settings = params.wiki.model_copy(
        update={"dump": params.wiki.dump.model_copy(update={"path": broken})}
    )
    with pytest.raises(SourceFormatError, match=r"broken\.xml"):
        run_wiki(bad_settings, out=out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_scratch_left_by_a_killed_run_is_cleared(tmp_path, params):
    out = tmp_path / "wiki"
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = [tmp_path / f".wiki.tmp-{dead.pid}-{time.time_ns()}", out / f".tmp-{dead.pid}"]
    for folder in stale:  # beside the output; inside it, as earlier versions left them
        folder.mkdir(parents=True)
        (folder / "articles.parquet").write_bytes(b"half written")
    run_wiki(params.wiki, out=out)
    assert not any(folder.exists() for folder in stale)
    assert pq.read_table(out / "articles.parquet").num_rows > 0
    assert [p.name for p in tmp_path.iterdir()] == ["wiki"]


def test_a_second_run_on_the_same_output_fails_before_reading_anything(tmp_path, params):
    out = tmp_path / "wiki"
    with stage_run("wiki", out) as first:
        with pytest.raises(OutputInUseError, match=f"in use by pid {os.getpid()}") as raised:
            run_wiki(params.wiki, out=out)
        assert first.scratch.name in str(raised.value) and first.scratch.is_dir()
        assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["wiki"]


LOG = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/">
  <logitem><id>1</id><timestamp>2019-05-07T13:00:00Z</timestamp><type>create</type>
    <action>create</action><logtitle>Korvenna tramway strike</logtitle></logitem>
  <logitem><id>2</id><timestamp>2026-03-04T09:12:00Z</timestamp><type>create</type>
    <action>create</action><logtitle>2026 Meridal River floods</logtitle></logitem>
</mediawiki>
"""


def test_log_dates_are_looked_up_for_candidates_only(tmp_path, params):
    log_path = tmp_path / "logging.xml"
    log_path.write_text(LOG)
    dump = params.wiki.dump.model_copy(update={"creation_dates": "log", "log_path": log_path})
    out = tmp_path / "wiki"
    stats = run_wiki(params.wiki.model_copy(update={"dump": dump}), out=out)

    articles = pq.read_table(out / "articles.parquet").to_pylist()
    assert [(a["title"], a["created_at_source"]) for a in articles] == [
        ("2026 Meridal River floods", "log")
    ]
    assert articles[0]["created_at"] == datetime(2026, 3, 4, 9, 12, tzinfo=UTC)
    reasons = {r["item_id"]: r["reason"] for r in pq.read_table(out / "drops.parquet").to_pylist()}
    assert reasons["2026 Korvenna tramway strike"] == "created_unknown"  # its log entry is 2019
    assert reasons["2026 Valdran general strike"] == "too_long"  # never looked up
    # the 13 events and the two older strikes passed every content rule
    assert stats.counts["created_at_looked_up"] == len(SNAPSHOT_EVENTS) + 2


def test_a_page_that_cannot_be_read_is_a_drop_and_the_stage_keeps_the_rest(tmp_path, params):
    clean = tmp_path / "clean"
    run_wiki(params.wiki, out=clean)
    data = SNAPSHOT_XML.read_bytes()
    victim = next(iter(sorted(SNAPSHOT_EVENTS)))
    at = data.index(f"<title>{victim}</title>".encode())
    at = data.rindex(b"</text>", at, data.index(b"</page>", at))  # its latest revision
    bad = tmp_path / "bad.xml"
    bad.write_bytes(data[:at] + b" \xff\xfe" + data[at:])  # two bytes that are not UTF-8
    dump = params.wiki.dump.model_copy(update={"path": bad})
    out = tmp_path / "wiki"
    stats = run_wiki(params.wiki.model_copy(update={"dump": dump}), out=out)

    titles = set(pq.read_table(out / "articles.parquet").column("title").to_pylist())
    assert titles == SNAPSHOT_EVENTS - {victim}
    drops = [Drop.from_row(r) for r in pq.read_table(out / "drops.parquet").to_pylist()]
    unread = [d for d in drops if d.step == "read"]
    assert [(d.item_id, d.reason) for d in unread] == [(victim, "undecodable")]
    assert stats.dropped["undecodable"] == 1
    # fidelity figures of the rendered pages are in stats.json, equal to the clean run's less
    # the lost page
    saved = json.loads((out / "stats.json").read_text())["counts"]
    before = json.loads((clean / "stats.json").read_text())["counts"]
    assert saved["pages_rendered"] == before["pages_rendered"] - 1
    assert saved["headings_found"] == saved["source_headings"] > 0
    assert saved["leftover_markup"] == 0 and "suspect_pages" not in saved


def _multistream(tmp_path):
    from tests.support.multistream import filler_page, split_export, write_multistream

    header, real = split_export(SNAPSHOT_XML)
    pages = [filler_page(100_000 + i, f"Filler {i}") for i in range(200)]
    for k, page in enumerate(real):
        pages.insert(5 * k + 2, page)
    dump, index = tmp_path / "multistream.xml.bz2", tmp_path / "index.txt.bz2"
    write_multistream(header, pages, dump, index, per_stream=20)
    return dump, index


def test_a_multistream_dump_is_read_candidate_first_with_the_same_articles(tmp_path, params):
    dump, index = _multistream(tmp_path)
    full = tmp_path / "full"
    run_wiki(params.wiki, out=full)
    titles = tmp_path / "candidates.txt"
    titles.write_text("\n".join(sorted(SNAPSHOT_EVENTS)) + "\nNot in the dump\n")
    settings = params.wiki.dump.model_copy(
        update={"path": dump, "index_path": index, "candidates_path": titles}
    )
    out = tmp_path / "multistream"
    stats = run_wiki(params.wiki.model_copy(update={"dump": settings}), out=out)

    assert pq.read_table(out / "articles.parquet").equals(pq.read_table(full / "articles.parquet"))
    assert stats.counts["read"] == len(SNAPSHOT_EVENTS)  # no filler page was parsed
    touched = json.loads((out / "stats.json").read_text())["multistream"]
    assert touched["candidates"] == len(SNAPSHOT_EVENTS) + 1
    assert touched["not_in_index"] == 1
    assert touched["pages_read"] == len(SNAPSHOT_EVENTS)
    assert touched["streams_read"] < touched["index_lines"] / 20


def test_with_a_creation_log_the_candidates_are_the_titles_created_in_the_window(tmp_path, params):
    dump, index = _multistream(tmp_path)
    log_path = tmp_path / "logging.xml"
    log_path.write_text(LOG)
    full_settings = params.wiki.dump.model_copy(
        update={"creation_dates": "log", "log_path": log_path}
    )
    full = tmp_path / "full"
    run_wiki(params.wiki.model_copy(update={"dump": full_settings}), out=full)
    settings = full_settings.model_copy(update={"path": dump, "index_path": index})
    out = tmp_path / "multistream"
    stats = run_wiki(params.wiki.model_copy(update={"dump": settings}), out=out)

    assert pq.read_table(out / "articles.parquet").equals(pq.read_table(full / "articles.parquet"))
    assert (
        stats.counts["read"]
        == json.loads((out / "stats.json").read_text())["multistream"]["candidates"]
    )


def test_an_index_without_candidates_is_refused(params, tmp_path):
    with pytest.raises(ValueError, match="index_path needs candidates"):
        params.wiki.dump.model_copy(update={"index_path": tmp_path}).model_validate(
            params.wiki.dump.model_dump() | {"index_path": str(SNAPSHOT_XML)}
        )


def test_non_articles_and_redirects_are_dropped_unparsed_for_the_reason_the_rules_give(
    tmp_path, params
):
    from builders.wikigen.select import classify
    from tests.support.snapshot import SNAPSHOT_TRAPS

    out = tmp_path / "wiki"
    stats = run_wiki(params.wiki, out=out)
    drops = {r["item_id"]: r for r in pq.read_table(out / "drops.parquet").to_pylist()}
    parsed = {a.title: a for a in read_dump(SNAPSHOT_XML, skip_sections=params.wiki.skip_sections)}
    for title in ("Korvenna tramway strike", "Template:Cite web"):
        rejection = classify(parsed[title], params.wiki)
        assert (drops[title]["reason"], drops[title]["detail"]) == (
            rejection.reason,
            rejection.detail,
        )
        assert drops[title]["reason"] == SNAPSHOT_TRAPS[title]
        facts = {f["key"]: f["value"] for f in drops[title]["facts"]}
        assert facts["word_count"] == ""  # never parsed
    assert stats.dropped["redirect"] >= 1 and stats.dropped["not_article"] >= 1


EMPTY_PAGES = """<page>
    <title>2026 Empty floods</title>
    <ns>0</ns>
    <id>990001</id>
    <revision>
      <id>990101</id>
      <timestamp>2026-05-07T13:00:00Z</timestamp>
      <model>wikitext</model>
      <format>text/x-wiki</format>
      <text bytes="0" xml:space="preserve" />
    </revision>
  </page>
  <page>
    <title>2026 Revisionless floods</title>
    <ns>0</ns>
    <id>990002</id>
  </page>
  <page>
    <title>2026 Infobox-only floods</title>
    <ns>0</ns>
    <id>990003</id>
    <revision>
      <id>990103</id>
      <timestamp>2026-05-07T13:00:00Z</timestamp>
      <model>wikitext</model>
      <format>text/x-wiki</format>
      <text xml:space="preserve">{{Infobox flood
| date = 1 May 2026
}}
[[Category:2026 floods]]</text>
    </revision>
  </page>
  """


def test_empty_pages_are_drops_and_words_kept_counts_the_selected_articles_only(tmp_path, params):
    clean = tmp_path / "clean"
    run_wiki(params.wiki, out=clean)
    data = SNAPSHOT_XML.read_text()
    at = data.index("<page>")
    dump = tmp_path / "empty-pages.xml"
    dump.write_text(data[:at] + EMPTY_PAGES + data[at:])
    settings = params.wiki.model_copy(
        update={"dump": params.wiki.dump.model_copy(update={"path": dump})}
    )
    out = tmp_path / "wiki"
    stats = run_wiki(settings, out=out)

    # the selected articles are the clean run's, byte for byte
    assert (out / "articles.parquet").read_bytes() == (clean / "articles.parquet").read_bytes()
    drops = {r["item_id"]: r for r in pq.read_table(out / "drops.parquet").to_pylist()}
    assert {t: drops[t]["reason"] for t in ("2026 Empty floods", "2026 Revisionless floods")} == {
        "2026 Empty floods": "not_event",
        "2026 Revisionless floods": "not_event",
    }
    assert drops["2026 Infobox-only floods"]["reason"] == "too_short"
    assert drops["2026 Infobox-only floods"]["detail"].startswith("0 words")
    before = json.loads((clean / "stats.json").read_text())["counts"]
    assert stats.counts["read"] == before["read"] + 3
    assert stats.counts["rejected"] == before["rejected"] + 3
    kept = pq.read_table(out / "articles.parquet").column("word_count").to_pylist()
    assert stats.counts["words_kept"] == before["words_kept"] == sum(kept)
