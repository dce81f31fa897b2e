"""The over-length policy, the length bins and their AUC, on hand-worked cases: the bins and the
AUC as lm-eval's OpenAI MRCR task defines them (``lm_eval/tasks/mrcr/utils.py``: ``MRCR_BINS``,
``_bin_max_for_tokens``, ``AUC``; lm-evaluation-harness PR #3754), worked out here by hand."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import pytest

from benchsmith_scoring import harness, tokens
from benchsmith_scoring.lengths import (
    BIN_NAMES,
    LengthPolicy,
    auc,
    bin_name,
    bin_of,
    binned,
    cut_middle,
    mean_by_bin,
    measure,
    total,
)
from tests.support.smollm import ensure_tokenizer
from tests.support.snapshot import ROOT

PASSAGE = "### Passage {i}\nThe river rose over the old stone bridge near the mill, day {i}.\n"


def row(context: str, question: str = "When did the river rise?", **extra: Any) -> dict:
    answer = {"answer": "day 3", "answers": ["day 3"], "answer_keywords": [], "language": "en"}
    return {"context": context, "question": question, **answer, **extra}


def unread(index: int) -> dict:
    raise AssertionError(f"row {index} was read: its published count should have been reused")


@pytest.mark.parametrize(
    ("count", "upper", "name"),
    [
        (1, 8192, "gt_0_le_8k"),
        (8192, 8192, "gt_0_le_8k"),  # upper edge included
        (8193, 16384, "gt_8k_le_16k"),
        (100_000, 131072, "gt_64k_le_128k"),
        (1 << 20, 1 << 20, "gt_512k_le_1m"),
    ],
)
def test_a_count_falls_in_mrcrs_bin_upper_edge_included(count: int, upper: int, name: str) -> None:
    assert bin_of(count) == upper
    assert bin_name(upper) == name


def test_the_bins_are_mrcrs_eight_and_beyond_them_is_an_error() -> None:
    assert BIN_NAMES == (
        "gt_0_le_8k", "gt_8k_le_16k", "gt_16k_le_32k", "gt_32k_le_64k", "gt_64k_le_128k",
        "gt_128k_le_256k", "gt_256k_le_512k", "gt_512k_le_1m",
    )  # fmt: skip
    with pytest.raises(ValueError, match="1048577 tokens"):
        bin_of((1 << 20) + 1)


def test_auc_is_the_trapezoid_over_populated_bins_divided_by_their_span() -> None:
    # bin means: 8k (1.0 + 0.5) / 2 = 0.75, 16k 0.5, 64k 0.25; 32k is empty and left out
    items = [(1.0, 8192), (0.5, 8192), (0.5, 16384), (0.25, 65536)]
    assert mean_by_bin(items) == {8192: 0.75, 16384: 0.5, 65536: 0.25}
    # (16384 - 8192)(0.75 + 0.5)/2 = 5120; (65536 - 16384)(0.5 + 0.25)/2 = 18432; span 57344
    assert auc(items) == pytest.approx((5120 + 18432) / 57344 * 100)  # 41.07
    # zero-filling the empty 32k bin would give another figure
    filled = [*items, (0.0, 32768)]
    assert auc(filled) != pytest.approx(auc(items))


def test_auc_of_one_bin_is_its_mean_and_of_none_is_nan() -> None:
    assert auc([(0.2, 16384), (0.4, 16384)]) == pytest.approx(30.0)
    assert math.isnan(auc([]))


def test_a_rows_scores_gain_its_bin_only() -> None:
    out = binned({"ak": 0.5, "ak_code": 1.0}, 16384)
    assert out == {
        "ak": 0.5,
        "ak_code": 1.0,
        "ak_gt_8k_le_16k": 0.5,
        "ak_code_gt_8k_le_16k": 1.0,
        "ak_auc": (0.5, 16384),
        "ak_code_auc": (1.0, 16384),
        "count_gt_8k_le_16k": 1,
    }
    assert binned({"ak": 0.5}, None) == {"ak": 0.5}
    assert total([1, 1, 1]) == 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"overlength": "cut"}, "overlength 'cut': one of skip, truncate"),
        ({"max_length": "4k", "tokenizer": "cl100k_base"}, "max_length '4k'"),
        ({"max_length": 0, "tokenizer": "cl100k_base"}, "max_length 0"),
        ({"max_length": 4096}, "max_length needs the tokenizer"),
        ({"overlength": "truncate", "tokenizer": "cl100k_base"}, "'truncate' needs max_length"),
    ],
)
def test_bad_options_name_the_option(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LengthPolicy.from_options(**options)


def test_options_given_as_text_are_read() -> None:
    policy = LengthPolicy.from_options("4096", "cl100k_base", None)
    assert policy == LengthPolicy(4096, "cl100k_base", "skip")


def test_published_counts_decide_and_rows_over_the_window_are_skipped_and_reported() -> None:
    counts = [3000, 4096, 4097, 9000, None]
    published = [None if n is None else {"cl100k_base": n, "o200k_base": 1} for n in counts]
    published[4] = {"o200k_base": 1}  # no cl100k_base count: counted here
    rows = {4: row("Short.")}
    policy = LengthPolicy(4096, "cl100k_base")
    lengths, report = measure(
        published, lambda i: rows[i] if i in rows else unread(i), policy,
        harness.lveval_prompt, "answer", "events_mixup_4k_clean",
    )  # fmt: skip
    assert [length.fits for length in lengths] == [True, True, False, False, True]
    assert [length.upper for length in lengths][:4] == [8192, 8192, 8192, 16384]
    assert lengths[4].tokens == tokens.load("cl100k_base").count_request(
        harness.lveval_prompt(rows[4]), "day 3"
    )
    assert (report.rows, report.kept, report.skipped, report.counted) == (5, 3, 2, 1)
    assert report.skipped_rows == [2, 3]
    assert report.skipped_bins == {"gt_0_le_8k": 1, "gt_8k_le_16k": 1}
    assert report.kept_bins == {"gt_0_le_8k": 3}
    assert lengths[3].reason == "9000 tokens of cl100k_base > max_length 4096"


def test_without_a_chosen_tokenizer_the_first_published_one_bins_and_nothing_is_skipped() -> None:
    published = [{"o200k_base": 20000, "cl100k_base": 1}, {"o200k_base": 10}]
    lengths, report = measure(
        published, unread, LengthPolicy(), harness.lveval_prompt, "answer", "c"
    )
    assert report.tokenizer == "o200k_base"
    assert [(length.upper, length.fits) for length in lengths] == [(32768, True), (8192, True)]
    assert report.skipped == 0


def test_a_row_beyond_the_last_bin_gets_none_and_is_still_measured_against_the_window() -> None:
    published = [{"cl100k_base": (1 << 20) + 1}, {"cl100k_base": 10}]
    policy = LengthPolicy(2 << 20, "cl100k_base")
    lengths, report = measure(published, unread, policy, harness.lveval_prompt, "answer", "c")
    assert [(length.upper, length.fits) for length in lengths] == [(None, True), (8192, True)]
    assert report.kept_bins == {"gt_0_le_8k": 1}


def test_a_hub_model_named_as_tokenizer_without_a_window_leaves_the_bins_to_the_export(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # lm-eval hands --model_args to the loader too: tokenizer=<hub id> is the harness's own
    published = [{"cl100k_base": 9000}, {"cl100k_base": 10}]
    policy = LengthPolicy.from_options(None, "meta-llama/Llama-3.1-8B-Instruct")
    lengths, report = measure(published, unread, policy, harness.lveval_prompt, "answer", "c")
    assert report.tokenizer == "cl100k_base"
    assert [length.upper for length in lengths] == [16384, 8192]
    assert "bins in the published counts" in caplog.text
    # with a window, the tokenizer it is counted in must be readable
    with pytest.raises(tokens.TokenizerError, match="no tokenizer file"):
        measure(
            published, lambda i: {"context": "x", "question": "q", "answer": "a"},
            LengthPolicy.from_options(4096, "meta-llama/Llama-3.1-8B-Instruct"),
            harness.lveval_prompt, "answer", "c",
        )  # fmt: skip


def test_rows_without_counts_and_without_a_tokenizer_get_no_bin() -> None:
    lengths, report = measure([None, None], unread, LengthPolicy(), harness.lveval_prompt, "a", "c")
    assert report.tokenizer is None
    assert [length.upper for length in lengths] == [None, None]


def test_a_named_tokenizer_file_reuses_the_counts_published_under_its_name() -> None:
    path = ensure_tokenizer(ROOT / ".cache")
    policy = LengthPolicy.from_options(100, f"smollm2={path}")
    published = [{"smollm2": 99}, {"smollm2": 101}]
    lengths, report = measure(published, unread, policy, harness.lveval_prompt, "answer", "c")
    assert report.tokenizer == "smollm2"
    assert [length.fits for length in lengths] == [True, False]


@pytest.mark.parametrize("spec", ["cl100k_base", "smollm2"])
def test_truncate_cuts_the_contexts_middle_until_the_request_fits(spec: str) -> None:
    if spec == "smollm2":
        spec = f"smollm2={ensure_tokenizer(ROOT / '.cache')}"
    context = "".join(PASSAGE.format(i=i) for i in range(60))
    long = row(context)
    tokenizer = tokens.load(spec)
    full = tokenizer.count_request(harness.lveval_prompt(long), "day 3")
    window = full // 2
    policy = LengthPolicy.from_options(window, spec, "truncate")
    lengths, report = measure([None], lambda i: long, policy, harness.lveval_prompt, "answer", "c")
    (length,) = lengths
    assert length.fits and length.context is not None and report.truncated == 1
    cut = tokenizer.count_request(
        harness.lveval_prompt({**long, "context": length.context}), "day 3"
    )
    assert window - 8 <= cut <= window  # fits, and is cut no more than it must be
    assert length.context.startswith("### Passage 0\n") and context.endswith(length.context[-60:])
    assert length.tokens == full and length.upper == bin_of(full)  # binned at its own length


def test_truncate_gives_up_on_a_row_that_does_not_fit_even_without_its_context() -> None:
    long = row("Some context.", question="why " * 300)
    policy = LengthPolicy.from_options(50, "cl100k_base", "truncate")
    (length,), report = measure(
        [None], lambda i: long, policy, harness.lveval_prompt, "answer", "c"
    )
    assert not length.fits and length.reason == "over max_length even with no context"
    assert report.skipped_rows == [0] and report.truncated == 0


def test_cut_middle_keeps_the_first_and_last_halves() -> None:
    tokenizer = tokens.load("cl100k_base")
    text = " ".join(f"w{i}" for i in range(200))
    cut = cut_middle(text, tokenizer, 20)
    ids = tokenizer.ids(text)
    assert cut == tokenizer.decode(ids[:10]) + tokenizer.decode(ids[-10:])
    assert cut_middle(text, tokenizer, len(ids)) == text


def test_the_loader_keeps_the_rows_that_fit_with_their_bins_and_reports_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_list(
        [row(f"Context {i}.", tokens={"cl100k_base": n}) for i, n in enumerate([100, 5000, 9000])]
    )
    policy = LengthPolicy(4096, "cl100k_base")
    report_file = tmp_path / "lengths.jsonl"
    with caplog.at_level(logging.INFO, logger="benchsmith_scoring"):
        kept = harness.with_lengths(rows, policy, harness.lveval_prompt, "answer", "c", report_file)
    assert kept["context"] == ["Context 0."]
    assert (kept["length_tokens"], kept["length_bin"], kept["length_skipped"]) == (
        [100],
        [8192],
        [2],
    )
    (line,) = report_file.read_text("utf-8").splitlines()
    assert json.loads(line)["skipped_rows"] == [1, 2]
    assert "c: 1 of 3 rows scored; 2 skipped and 0 truncated over max_length 4096" in caplog.text
    scores = harness.lveval_results(kept[0], ["day 3"])
    assert scores["ak_gt_0_le_8k"] == scores["ak"] and scores["count_gt_0_le_8k"] == 1
    assert scores["skipped"] == 2


def test_when_no_row_fits_the_first_stands_in_with_no_context_and_is_not_scored() -> None:
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_list(
        [row(f"Context {i}.", tokens={"cl100k_base": 5000 + i}) for i in range(3)]
    )
    policy = LengthPolicy(4096, "cl100k_base")
    kept = harness.with_lengths(rows, policy, harness.lveval_prompt, "answer", "c")
    (stand_in,) = kept
    assert stand_in["context"] == "" and stand_in["question"] == rows[0]["question"]
    assert stand_in["length_stand_in"] and stand_in["length_skipped"] == 3
    assert harness.lveval_results(stand_in, ["day 3"]) == {"skipped": 3}


def test_the_loader_leaves_rows_alone_when_no_tokenizer_decides() -> None:
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_list([row("Context.")])
    same = harness.with_lengths(rows, LengthPolicy(), harness.lveval_prompt, "answer", "c")
    assert same is rows
    assert "ak_auc" not in harness.lveval_results(same[0], ["day 3"])
