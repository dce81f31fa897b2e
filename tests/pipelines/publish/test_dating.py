"""Dated rows: every published row carries its event's dates and first release; a consumer
keeps the items after a model's cutoff with one filter, and a release can hold only new items."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest

from benchsmith_scoring.harness import after_cutoff
from builders.releases import Release
from pipelines.publish.dating import COLUMNS
from pipelines.publish.registry import DATASETS
from tests.pipelines.publish.conftest import publish_settings
from tests.support.snapshot import ROOT

EARLIER = Release("2026.6.0", date(2026, 5, 31))


def _entries(data: Path) -> dict[str, datetime]:
    rows = pq.read_table(data / "wikigen" / "entries.parquet").to_pylist()
    return {r["event_id"]: r["created_at"] for r in rows}


def _events_of(config: str, rows: list[dict], data: Path) -> list[str | None]:
    """Each published row's event, found from the stage outputs by its own route."""
    if config.startswith("events_mixup"):
        qa = {
            r["qa_id"]: r["source"] for r in pq.read_table(data / "lveval/qa.parquet").to_pylist()
        }
        return [qa[r["qa_id"]] for r in rows]
    for column in ("event_id", "entry_id", "source"):
        if column in rows[0]:
            return [str(r[column]).removeprefix("event:") for r in rows]
    raise AssertionError(f"{config}: no event column")


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_row_of_every_config_carries_its_event_s_dates(hub_export, publish_data, name):
    created = _entries(publish_data)
    configs = sorted(
        p for p in (hub_export / name).iterdir() if p.is_dir() and any(p.glob("*.parquet"))
    )
    assert configs
    for folder in configs:
        rows = [r for f in sorted(folder.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
        assert rows and all(set(COLUMNS) <= set(r) for r in rows), folder.name
        for row, event in zip(rows, _events_of(folder.name, rows, publish_data), strict=True):
            assert row["event_created_at"] == created.get(event), (folder.name, event)
            assert row["first_release"] == "2026.11.0"
            if event in created:  # the snapshot's infoboxes all give a start date
                assert row["event_date"] and row["event_date"][:4] == "2026"


def test_first_release_follows_the_history_and_items_new_keeps_only_this_release_s(
    publish_data, tmp_path
):
    from pipelines.stages.publish import run_publish, summary

    created = _entries(publish_data)
    later = {e for e, at in created.items() if at.date() > EARLIER.until}
    assert later and later < set(created)
    releases = [EARLIER, Release("2026.11.0", date(2026, 12, 31))]
    out = tmp_path / "publish"
    history = [{"version": EARLIER.version, "until": EARLIER.until}]
    settings = publish_settings(tmp_path, datasets=["wikigenbench"], history=history, items="new")
    run_publish(settings, data=publish_data, out=out, root=ROOT, params_file=ROOT / "params.yaml",
                releases=releases)  # fmt: skip
    entries = pq.read_table(out / "wikigenbench/entries").to_pylist()
    assert {r["event_id"] for r in entries} == later
    assert {r["first_release"] for r in entries} == {"2026.11.0"}
    documents = pq.read_table(out / "wikigenbench/documents").to_pylist()
    assert documents and {r["event_id"] for r in documents} <= later

    settings = publish_settings(tmp_path, datasets=["wikigenbench"], history=history)
    stats = run_publish(settings, data=publish_data, out=out, root=ROOT,
                        params_file=ROOT / "params.yaml", releases=releases)  # fmt: skip
    entries = pq.read_table(out / "wikigenbench/entries").to_pylist()
    assert len(entries) == len(created)
    # the summary line from the returned stats alone, with the version stats.json records
    version = json.loads((out / "stats.json").read_text())["version"]
    assert summary(stats, tmp_path / "absent") == (
        f"publish: wikigenbench {stats.counts['wikigenbench_rows']} rows -> {tmp_path / 'absent'}/ "
        f"(version {version})"
    )
    for row in entries:
        assert row["first_release"] == ("2026.11.0" if row["event_id"] in later else "2026.6.0")
    card = (out / "wikigenbench" / "README.md").read_text()
    assert "## Releases and dates" in card and "2026.11.0" in card


def test_a_cutoff_filter_on_the_export_keeps_the_events_created_after_it(hub_export, publish_data):
    created = _entries(publish_data)
    cutoff = "2026-06-30"
    expected = {
        e for e, at in created.items() if at > datetime(2026, 6, 30, 23, 59, 59, tzinfo=UTC)
    }
    assert 0 < len(expected) < len(created)
    loaded = datasets.load_dataset(str(hub_export / "wikigenbench"), "entries")
    fresh = after_cutoff(loaded, cutoff)
    assert {r["event_id"] for split in fresh.values() for r in split} == expected
    records = datasets.load_dataset(str(hub_export / "lveval"), "events_mixup_2k_clean")["test"]
    qa = {
        r["qa_id"]: r["source"]
        for r in pq.read_table(publish_data / "lveval/qa.parquet").to_pylist()
    }
    kept = after_cutoff(records, cutoff)
    assert 0 < len(kept) < len(records)
    assert {qa[r["qa_id"]] for r in kept} <= expected
    assert len(kept) == sum(qa[r["qa_id"]] in expected for r in records)
