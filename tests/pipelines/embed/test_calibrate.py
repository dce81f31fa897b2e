"""Calibration: the fastest configuration that agrees with float32, measured on this machine,
stored under its fingerprint, and never one that disagrees."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipelines.embed.calibrate import Candidate, calibrate, candidates
from pipelines.embed.encoder import Encoder, build_encoder
from pipelines.embed.settings import EmbedSettings

MACHINE = {"cores": 2, "torch": "x", "arch": "x86_64", "cpu": "test", "flags": []}
SAMPLE = 8
"""Texts a test calibration times: what it decides does not depend on how many."""


@pytest.fixture(scope="module")
def sample(passages: list[str]) -> list[str]:
    """:data:`SAMPLE` real passages of at most 60 words: each candidate reads them twice."""
    return [" ".join(p.split()[:60]) for p in passages[:SAMPLE]]


def settings(tmp_path: Path, **overrides: object) -> EmbedSettings:
    caches = {
        "cache": tmp_path / "cache.sqlite",
        "calibration": tmp_path / "calibration.json",
        "onnx_cache": tmp_path / "onnx",
    }
    return EmbedSettings.model_validate({**caches, "calibrate_min_texts": 0, **overrides})


def test_candidates_cover_what_is_left_to_auto_with_float32_first(tmp_path):
    auto = candidates(settings(tmp_path, backend="torch"), cuda=False)
    assert auto[0] == Candidate("float32", "sdpa", 2048)
    assert {c.dtype for c in auto} == {"float32", "bfloat16"} and len(auto) == 8
    assert not any(c.quantize == "int8" for c in auto)
    with_int8 = candidates(settings(tmp_path, quantize="auto"), cuda=False)
    assert {c.quantize for c in with_int8} == {"none", "int8"}
    assert not any(
        c.quantize == "int8" for c in candidates(settings(tmp_path, quantize="auto"), cuda=True)
    )
    fixed = settings(
        tmp_path, dtype="float32", attention="eager", batch_tokens=4096, backend="torch"
    )
    assert candidates(fixed, cuda=False) == [Candidate("float32", "eager", 4096)]
    chosen = calibrate(fixed, ["a text"] * 10, 10, cuda=False, info=MACHINE)
    assert chosen.reason == "set explicitly in params.yaml" and not chosen.measured


def test_calibration_measures_keeps_a_passing_choice_and_reuses_it_per_machine(tmp_path, sample):
    s = settings(tmp_path, calibrate_texts=SAMPLE, batch_tokens=2048)
    texts = sample
    first = calibrate(s, texts, 5000, cuda=False, info=MACHINE)
    assert not first.reused and first.measured
    # the choice is the fastest passing row of the last stage measured
    last = [r for r in first.measured if r.get("stage") == first.measured[-1].get("stage")]
    row = next(r for r in last if r["candidate"] == first.chosen.label)
    assert row["passed"] and row["mean_cosine"] >= s.min_cosine
    assert row["seconds"] == min(r["seconds"] for r in last if r["passed"])
    stored = json.loads(s.calibration.read_text())
    assert stored[first.fingerprint]["chosen"]["dtype"] == first.chosen.dtype
    again = calibrate(s, texts, 5000, cuda=False, info=MACHINE)
    assert again.reused and again.chosen == first.chosen and again.measured == first.measured
    moved = calibrate(s, texts, 5000, cuda=False, info={**MACHINE, "cores": 64}, build=_Same)
    assert not moved.reused and moved.fingerprint != first.fingerprint
    assert set(json.loads(s.calibration.read_text())) == {first.fingerprint, moved.fingerprint}


class _Same:
    """An encoder of any candidate that answers at once, always alike (all agree)."""

    def __init__(self, candidate: Candidate):
        self.candidate = candidate

    def encode(self, texts):
        return np.eye(len(texts), 384, dtype=np.float32)


class _Disagreeing:
    """An encoder that answers at once with vectors unlike float32's."""

    def encode(self, texts):
        rng = np.random.default_rng(len(texts))
        return rng.normal(size=(len(texts), 384)).astype(np.float32)


def test_a_faster_candidate_that_disagrees_is_never_chosen(tmp_path, sample):
    s = settings(tmp_path, calibrate_texts=SAMPLE, quantize="auto", batch_tokens=2048)

    def build(candidate: Candidate) -> Encoder:
        if candidate.quantize == "int8":
            return _Disagreeing()  # type: ignore[return-value]
        return build_encoder(s, dtype=candidate.dtype, attention=candidate.attention,
                             batch_tokens=candidate.batch_tokens, quantize="none")  # fmt: skip

    result = calibrate(s, sample, 5000, cuda=False, build=build, info=MACHINE)
    int8 = [r for r in result.measured if r["candidate"].startswith("int8")]
    assert int8 and not any(r["passed"] for r in int8)
    assert min(r["seconds"] for r in int8) < min(
        r["seconds"] for r in result.measured if r["passed"]
    )
    assert result.chosen.quantize == "none"
    assert "was faster but failed them" in result.reason


def test_real_int8_with_the_floors_raised_is_never_chosen(tmp_path, sample):
    s = settings(tmp_path, calibrate_texts=SAMPLE, quantize="auto", batch_tokens=2048,
                 attention="sdpa", min_cosine=0.99999)  # fmt: skip
    result = calibrate(s, sample, 5000, cuda=False, info=MACHINE)
    int8 = [r for r in result.measured if r["candidate"].startswith("int8")]
    assert int8 and not any(r["passed"] for r in int8)
    assert result.chosen.quantize == "none"


def test_a_small_job_without_a_stored_calibration_runs_float32_unmeasured(tmp_path, passages):
    s = settings(tmp_path, calibrate_min_texts=1000)
    result = calibrate(s, passages[:24], 314, cuda=False, info=MACHINE)
    assert result.chosen.dtype == "float32" and not result.measured
    assert "fewer than embed.calibrate_min_texts" in result.reason
    assert not s.calibration.exists()


@pytest.mark.parametrize("min_texts", [0, 1000])
def test_the_stage_records_the_calibration_in_stats(tmp_path, sample, min_texts):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipelines.stages.embed import run_embed

    chunks = tmp_path / "chunks.parquet"
    pq.write_table(pa.table({"chunk_id": [f"c{i}" for i in range(SAMPLE)], "text": sample}), chunks)
    s = settings(tmp_path, calibrate_texts=SAMPLE, calibrate_min_texts=min_texts, batch_tokens=2048)
    run_embed(s, chunks=chunks, out=tmp_path / "embed")
    saved = json.loads((tmp_path / "embed" / "stats.json").read_text())
    chosen = saved["calibration"]["chosen"]
    assert saved["encoder"]["dtype"] == chosen["dtype"]
    assert saved["encoder"]["attention"] == chosen["attention"]
    assert bool(saved["calibration"]["measured"]) is (min_texts == 0)
