"""Every stage's one-line summary is made from the stats its run returns, never from files: with
an output folder that does not exist, each still prints its line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pipelines.dag.table import STAGES
from pipelines.stats import StageStats

HEADLINES: dict[str, dict[str, Any]] = {
    "summhay_baselines": {"coverage_bound": {"bm25": 61.25, "oracle": 100.0}},
    "lveval_baselines": {"ak_mean": 42.5},
    "wikigen_baselines": {"reference_recall": {"bm25": 33.3, "dense": 40.0}},
    "contamination": {"model": "m", "probed": {"lveval": 3, "wikigenbench": 2}, "flagged": 1},
    "validate": {"panel": 3, "items": {"lveval": 5, "summhay": 4}, "dropped": {"lveval": 2}},
    "publish": {"version": "2026.1.0"},
}
"""What the runs of the stages whose summary shows more than counts put in ``headline``."""

LINES = {
    "summhay_baselines": "coverage bound by retriever: bm25 61, oracle 100 ->",
    "lveval_baselines": "mean AK 42.5 ->",
    "wikigen_baselines": "reference recall by reranker: bm25 33, dense 40; 4 articles written",
    "contamination": "m asked closed-book (3 LV-Eval, 2 WikiGenBench); 1 flagged ->",
    "validate": "a panel of 3 labelled 5 LV-Eval, 4 SummHay, 2 dropped ->",
    "publish": "publish: lveval 7 rows -> ",
}


@pytest.mark.parametrize("name", list(STAGES))
def test_a_summary_needs_only_the_stats(name: str, tmp_path: Path) -> None:
    counts = Counter({"articles_ok": 4, "lveval_rows": 7, "lveval_configs": 2})
    stats = StageStats(name, counts=counts, headline=HEADLINES.get(name, {}))
    out = tmp_path / "never-written"
    line = STAGES[name].summary()(stats, out)
    assert line.startswith(name.replace("_", " ")) and f"{out}/" in line
    assert LINES.get(name, "") in line
    assert not out.exists()


def test_the_headline_stays_out_of_stats_json(tmp_path: Path) -> None:
    stats = StageStats("publish")
    stats.show(version="2026.1.0")
    stats.write(tmp_path)
    written = json.loads((tmp_path / "stats.json").read_text())
    assert set(written) == {"stage", "counts", "dropped", "duration_s"}


def test_headline_mappings_keep_the_metrics_file_s_order() -> None:
    """A figure shown by key (recall by reranker) lists its keys as the sorted metrics file
    does, whatever order the run computed them in."""
    stats = StageStats("wikigen_baselines", counts=Counter({"entries": 2}))
    stats.show(reference_recall={"random": 50.0, "bm25": 51.0}, model="m")
    assert list(stats.headline["reference_recall"]) == ["bm25", "random"]
    line = STAGES["wikigen_baselines"].summary()(stats, Path("out"))
    assert "reference recall by reranker: bm25 51, random 50;" in line


DEGENERATE = {
    "web": ({"events_without_documents": 2}, "events (2 without a usable document),"),
    "wikigen": ({"entries_without_documents": 1}, "documents (1 entries without any) ->"),
    "lveval_baselines": ({"records_empty_context": 3}, "(3 with an empty context, not scored);"),
    "wikigen_baselines": ({"entries_without_chunks": 1}, "entries (1 without chunks);"),
    "summhay_baselines": (
        {"summhay_haystacks_without_documents": 1, "summhay_subtopics_without_insights": 2},
        "(1 haystacks without documents, 2 subtopics without insights);",
    ),
}
"""What each stage counts of its degenerate items, and how its summary line names them."""


@pytest.mark.parametrize("name", list(DEGENERATE))
def test_a_summary_names_the_degenerate_items_only_when_there_are_some(name: str) -> None:
    counts, shown = DEGENERATE[name]
    summarize = STAGES[name].summary()
    plain = StageStats(name, headline=HEADLINES.get(name, {}))
    odd = StageStats(name, counts=Counter(counts), headline=HEADLINES.get(name, {}))
    assert shown in summarize(odd, Path("out"))
    assert "without" not in summarize(plain, Path("out"))
    assert "empty context" not in summarize(plain, Path("out"))
