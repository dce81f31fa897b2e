"""Distractor pools fixed at an item's first release: later events never enter an old item's
context, so its records stay byte-identical when a refresh adds events."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from builders.lveval.build import Prepared, records
from builders.lveval.pools import Pools
from builders.releases import Release
from tests.builders.lveval.test_contexts import make_corpus, make_item

RELEASES = [Release("2026.6.0", date(2026, 5, 31)), Release("2026.11.0", date(2026, 10, 31))]
DAYS = {"event-a": date(2026, 1, 19), "event-b": date(2026, 4, 12), "event-c": date(2026, 9, 1)}


def _passages(events: list[str]):
    """Twenty passages per event, and ten of an imported QA set (no event)."""
    out = []
    for n, event in enumerate(events):
        out += [replace(p, passage_id=f"{event}#{p.passage_id}", source=event)
                for p in make_corpus(20, seed=n + 1)]  # fmt: skip
    out += [replace(p, passage_id=f"hub#{p.passage_id}", source="squad_mixup")
            for p in make_corpus(10, seed=99)]  # fmt: skip
    return out


def _item(k: int, event: str):
    item, support = make_item(k)
    return replace(item, source=event), replace(support, source=event)


def _rows(pools: Pools, item, level_words: int = 3000) -> list[dict]:
    pool = pools.of(item)
    prepared = Prepared(item, (), ())
    return list(records(prepared, pool.corpus, "3k", level_words, seed=7, tolerance=0.05,
                        pool_until=str(pool.until)))  # fmt: skip


def test_an_item_draws_only_from_events_created_by_its_first_release():
    item, support = _item(1, "event-a")
    late, late_support = _item(2, "event-c")
    pools = Pools([*_passages(["event-a", "event-b", "event-c"]), support, late_support], DAYS,
                  RELEASES)  # fmt: skip
    early = pools.of(item)
    assert early.until == date(2026, 5, 31)
    assert {p.source for p in early.passages} == {"event-a", "event-b", "squad_mixup"}
    assert {p.source for p in pools.of(late).passages} == {
        "event-a", "event-b", "event-c", "squad_mixup"
    }  # fmt: skip
    rows = _rows(pools, item)
    used = {pid for row in rows for pid in row["passage_ids"]}
    assert used and not any(pid.startswith("event-c#") for pid in used)
    assert {row["pool_until"] for row in rows} == {"2026-05-31"}


def test_adding_a_later_event_leaves_an_old_item_s_records_byte_identical():
    item, support = _item(3, "event-a")
    before = Pools([*_passages(["event-a", "event-b"]), support], DAYS, RELEASES[:1])
    after = Pools([*_passages(["event-a", "event-b", "event-c"]), support], DAYS, RELEASES)
    assert _rows(before, item) == _rows(after, item)
    # whereas one pool for everything (no releases) lets the new event in
    everything = Pools([*_passages(["event-a", "event-b", "event-c"]), support], DAYS, [])
    assert everything.of(item).until is None
    assert _rows(everything, item) != _rows(before, item)


def test_an_item_of_no_event_draws_from_the_first_release_s_pool():
    item, support = _item(4, "rajpurkar/squad")
    pools = Pools([*_passages(["event-a", "event-c"]), support], DAYS, RELEASES)
    assert pools.of(item).until == RELEASES[0].until
    assert pools.of(item) is pools.of(replace(item, qa_id="qa-other"))  # built once per window
