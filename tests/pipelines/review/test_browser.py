"""The review page in a real browser (Debian's chromium, driven by Playwright): three items
reviewed with the keyboard, kept across a reload, then published with the rejection, the
correction and the card's Audit."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builders.lveval.kpr import Replacer
from builders.lveval.records import Rule
from pipelines.publish.reviews import read_reviews, reviews_path
from pipelines.review import ReviewSession, load_items
from tests.pipelines.publish.conftest import publish_settings
from tests.support.review_server import review_server
from tests.support.snapshot import ROOT

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium (the Makefile's setup installs it); Playwright's own download cannot work
offline."""
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
REASON = "the answer is not in the evidence"


@pytest.fixture()
def browser_page(tmp_path: Path):
    """A page of a fresh headless chromium profile."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run make setup (it installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            tmp_path / "profile", executable_path=str(CHROMIUM), args=FLAGS, headless=True
        )
        yield context.new_page()
        context.close()


def _rows(export: Path, config: str) -> list[dict]:
    return [
        r for f in sorted((export / config).glob("*.parquet")) for r in pq.read_table(f).to_pylist()
    ]


def test_three_items_reviewed_by_keyboard_are_kept_and_published(
    browser_page, hub_export: Path, publish_data: Path, tmp_path: Path
):
    page = browser_page
    version, items = load_items(hub_export, ["lveval"], sample=3, seed=3)
    session = ReviewSession(version, items, reviews_path(tmp_path / "reviews", version))
    fixed = items[2].title.rstrip("?") + ", by the islands' calendar?"
    with review_server(session) as url:
        page.goto(f"{url}/")
        assert page.inner_text("#progress") == "Item 1 of 3, 0 reviewed"
        page.fill("input[name=reviewer]", "ana")
        page.keyboard.press("Escape")
        page.keyboard.press("a")  # accept
        page.wait_for_url("**/items/2?reviewer=ana")
        assert page.inner_text("#progress") == "Item 2 of 3, 1 reviewed"
        page.keyboard.press("r")  # reject: the reason box takes the keys, Enter saves
        page.keyboard.type(REASON)
        page.keyboard.press("Enter")
        page.wait_for_url("**/items/3?reviewer=ana")
        page.keyboard.press("e")  # edit the question, Enter saves (accepted, corrected)
        page.keyboard.type(fixed)
        page.keyboard.press("Enter")
        page.wait_for_url("**/items/3?reviewer=ana&saved=1")
        assert page.inner_text("#progress") == "Item 3 of 3, 3 reviewed"
        page.keyboard.press("p")
        page.wait_for_url("**/items/2?reviewer=ana")
        page.reload()
        assert page.is_checked("input[name=decision][value=reject]")
        assert page.input_value("input[name=reason]") == REASON
        assert "Your latest decision on this item: reject" in page.inner_text("#kept")
        page.goto(f"{url}/items/3?reviewer=ana")
        assert page.input_value("input[name='correction.question']") == fixed
        assert page.is_checked("input[name='verdict.question'][value=wrong]")
        page.screenshot(path=str(tmp_path / "review.png"), full_page=True)
    assert (tmp_path / "review.png").stat().st_size > 10_000

    lines = [json.loads(line) for line in session.reviews.read_text().splitlines()]
    assert [(x["item"], x["decision"], x["reviewer"]) for x in lines] == [
        (items[0].item, "accept", "ana"), (items[1].item, "reject", "ana"),
        (items[2].item, "accept", "ana"),
    ]  # fmt: skip
    assert lines[1]["reason"] == REASON and lines[0]["release"] == version
    assert lines[2]["fields"]["question"] == {"verdict": "wrong", "correction": fixed}
    assert len(read_reviews(session.reviews, version)) == 3

    from pipelines.stages.publish import run_publish

    out = tmp_path / "publish"
    stats = run_publish(
        publish_settings(tmp_path, datasets=["lveval"], namespace="benchsmith-test"),
        data=publish_data, out=out, root=ROOT, params_file=ROOT / "params.yaml",
        reviews=tmp_path / "reviews",
    )  # fmt: skip
    assert stats.counts["lveval_rejected_in_review"] == 1
    export = out / "lveval"
    record = json.loads((export / "release.json").read_text())
    for config, ids in record["configs"].items():
        assert items[1].item not in ids, config  # left out of every config
        assert items[0].item in ids and items[2].item in ids, config
    qa = {r["qa_id"]: r for r in _rows(export, "qa")}
    assert qa[items[2].item]["question"] == fixed
    (kpr,) = [r for r in _rows(export, "events_mixup_2k_kpr") if r["qa_id"] == items[2].item]
    rules = [Rule(r["orig"], r["repl"]) for r in kpr["replacement_rules"]]
    assert kpr["question"] == Replacer(rules)(fixed)  # with the row's own KPR rules
    card = (export / "README.md").read_text()
    assert "## Audit" in card and "People reviewed 3 items of this release" in card
    assert "| decision | 3 | 2 | 66.7% |" in card and "| question | 3 | 2 | 66.7% |" in card
    assert f"| qa | {items[1].item} | ana | {REASON} |" in card  # the drop, with its reason
    assert f"| {items[2].item} | question | {fixed[:60]}" in card
