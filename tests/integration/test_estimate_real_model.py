"""``benchsmith estimate`` against a real run of SmolLM2 on the local constrained server: the
LV-Eval answer step is run for part of its records, the estimate prices the rest with the
model's own tokenizer and the step's mean answer length from the cache, and the rest is then
run for real. Calls must match exactly, prompt and total tokens within 10%."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.dag.estimate import estimate
from pipelines.dag.invoke import Workspace, run_stage
from pipelines.llm.dry_run import MEAN
from pipelines.settings import Params
from tests.support.smollm import SmolLMServer, ensure_model, llm_settings
from tests.support.snapshot import ROOT

pytestmark = pytest.mark.integration


def _half(source: Path, target: Path) -> None:
    """A data folder whose record files hold the first half of ``source``'s rows."""
    records = target / "lveval" / "records"
    records.mkdir(parents=True)
    for path in sorted((source / "lveval" / "records").glob("*.parquet")):
        table = pq.read_table(path)
        pq.write_table(table.slice(0, max(1, table.num_rows // 2)), records / path.name)


def test_the_estimate_of_a_step_matches_its_real_run(
    server: SmolLMServer, lveval_data: Path, params: Params, tmp_path: Path
) -> None:
    llm = llm_settings(
        server,
        tmp_path / "llm.sqlite",
        max_tokens=24,
        # no re-asks, which no estimate foresees: an answer cut at 24 tokens is unusable
        # (never served from the cache), so the estimate counts it as a call again, exactly
        reasks=0,
        concurrency=1,
        tokenizer=str(ensure_model(ROOT / ".cache")),
        input_cost_per_mtok=0.15,
        output_cost_per_mtok=0.6,
    )
    baselines = params.lveval_baselines.model_copy(
        update={"retrievers": ["bm25"], "context_tokens": 400}
    )
    p = params.model_copy(update={"llm": llm, "lveval_baselines": baselines})
    half = tmp_path / "half"
    _half(lveval_data, half)
    run_stage(
        "lveval_baselines", p, Workspace(ROOT, ROOT / "params.yaml", half), out=tmp_path / "a"
    )

    where = Workspace(ROOT, ROOT / "params.yaml", lveval_data)
    (row,) = [r for r in estimate(p, where, ["lveval_baselines"]).rows]
    assert row.cache_hits > 0 and row.calls > 0 and row.completion_from == MEAN
    run_stage("lveval_baselines", p, where, out=tmp_path / "b")
    real = json.loads((tmp_path / "b" / "stats.json").read_text())["llm"]

    assert (row.calls, row.cache_hits) == (real["calls"], real["cache_hits"])  # exact
    assert row.prompt_tokens == pytest.approx(real["prompt_tokens"], rel=0.10)
    total = real["prompt_tokens"] + real["completion_tokens"]
    assert row.prompt_tokens + row.completion_tokens == pytest.approx(total, rel=0.10)
