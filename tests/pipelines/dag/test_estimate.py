"""``benchsmith estimate`` against runs through a real local OpenAI-compatible server: the calls
it foresees are the calls a run makes, what the cache holds is subtracted, and the estimate
sends nothing and writes nothing to the cache."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.dag.estimate import estimate, model_stages
from pipelines.dag.invoke import Workspace, run_stage
from pipelines.display import print_estimate
from pipelines.failure_ledger import FAILURES, read_failures
from pipelines.llm.dry_run import MAX_TOKENS, MEAN
from pipelines.settings import Params
from tests.support.openai_server import openai_server
from tests.support.snapshot import ROOT

ANSWER = "The answer is in the passages above, as they say."


def _params(params: Params, url: str, tmp_path: Path) -> Params:
    llm = params.llm.model_copy(
        update={
            "backend": "openai",
            "base_url": url,
            "model": "scripted",
            "cache": tmp_path / "llm.sqlite",
            "retries": 0,
            "concurrency": 1,  # a question asked twice is then answered by the cache, as foreseen
            "max_tokens": 40,
            "input_cost_per_mtok": 0.15,
            "output_cost_per_mtok": 0.6,
        }
    )
    baselines = params.lveval_baselines.model_copy(
        update={"retrievers": ["bm25"], "context_tokens": 600}
    )
    return params.model_copy(update={"llm": llm, "lveval_baselines": baselines})


def _row(result: Any) -> Any:
    (row,) = [r for r in result.rows if r.prompt == "lveval/answer"]
    return row


def test_the_estimate_foresees_the_runs_calls_and_subtracts_the_cache(
    lveval_data: Path, params: Params, tmp_path: Path
) -> None:
    where = Workspace(ROOT, ROOT / "params.yaml", lveval_data)
    with openai_server(lambda body, n: ANSWER) as (url, seen):
        p = _params(params, url, tmp_path)
        before = _row(estimate(p, where, ["lveval_baselines"]))
        assert seen.count == 0 and not (tmp_path / "llm.sqlite").exists()  # nothing sent
        assert before.calls > 0 and before.calls + before.cache_hits == before.asks
        assert before.completion_tokens == before.calls * 40  # no answers seen: max_tokens
        assert before.completion_from == MAX_TOKENS
        assert before.cost_usd == pytest.approx(
            (before.prompt_tokens * 0.15 + before.completion_tokens * 0.6) / 1e6, abs=1e-6
        )

        run_stage("lveval_baselines", p, where, out=tmp_path / "run")
        ran = json.loads((tmp_path / "run" / "stats.json").read_text())["llm"]
        assert ran["calls"] == seen.count == before.calls  # calls: exact
        assert ran["cache_hits"] == before.cache_hits  # the same question twice: asked once

        # the cache loses a third of its answers: the estimate asks for exactly those again
        with sqlite3.connect(tmp_path / "llm.sqlite") as db:
            keys = [k for (k,) in db.execute("SELECT key FROM responses ORDER BY key")]
            lost = keys[::3]
            db.executemany("DELETE FROM responses WHERE key = ?", [(k,) for k in lost])
        after = _row(estimate(p, where, ["lveval_baselines"]))
        assert (after.calls, after.cache_hits) == (len(lost), before.asks - len(lost))
        assert after.completion_from == MEAN  # the step's mean from the answers cached
        words = len(ANSWER.split())  # the scripted server counts words as tokens
        assert after.completion_tokens == len(lost) * words
        assert seen.count == before.calls


def test_model_stages_run_in_table_order_with_the_stages_between_them() -> None:
    names = [s.name for s in model_stages()]
    assert names.index("summhay") < names.index("chunk") < names.index("wikigen_baselines")
    assert {"wiki", "web", "embed", "publish"}.isdisjoint(names)
    assert [s.name for s in model_stages(["lveval"])] == ["lveval"]
    with pytest.raises(ValueError, match="no model-asking stage \\['wiki'\\]"):
        model_stages(["wiki"])


def test_the_cli_refuses_an_unknown_stage_and_prints_every_prompt(
    lveval_data: Path, params: Params, tmp_path: Path
) -> None:
    args = ["estimate", "--params", str(ROOT / "params.yaml"), "--stage", "wiki"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 1 and "no model-asking stage ['wiki']" in refused.output

    where = Workspace(ROOT, ROOT / "params.yaml", lveval_data)
    with openai_server(lambda body, n: ANSWER) as (url, _):
        result = estimate(_params(params, url, tmp_path), where, ["lveval_baselines"])
    console = Console(record=True, width=150)
    print_estimate(result.to_dict(), console)
    text = console.export_text()
    row = _row(result)
    assert f"{row.completion_tokens}*" in text  # marked: max_tokens, no cached answers yet
    assert "lveval/answer" in text and "approximate (4 tokens per 3 words)" in text
    assert str(row.calls) in text and f"≤ {row.calls * 3}" in text  # llm.reasks: 2


def test_the_estimate_counts_every_judge_call_of_every_written_article(
    snapshot_entries: Path, snapshot_chunks: Path, params: Params, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    for source, target in ((snapshot_entries, "wikigen/entries.parquet"),
                           (snapshot_chunks, "chunk/chunks.parquet")):  # fmt: skip
        (data / target).parent.mkdir(parents=True)
        (data / target).symlink_to(source)
    p = _params(params, "http://127.0.0.1:9/v1", tmp_path)  # a dry run sends nothing
    baselines = params.wikigen_baselines.model_copy(
        update={"retrievers": ["bm25"], "methods": ["rr"]}
    )
    result = estimate(
        p.model_copy(update={"wikigen_baselines": baselines}),
        Workspace(ROOT, ROOT / "params.yaml", data),
        ["wikigen_baselines"],
    )
    asks = {r.prompt: r.asks for r in result.rows}
    articles = asks["wikigen/rr"]
    assert articles > 0
    # one Fluency-and-Info call, one outline score and three Prometheus grades per article
    assert asks["wikigen/quality"] == asks["wikigen/outline_score"] == articles
    assert asks["wikigen/rubric"] == 3 * articles
    judged = [r for r in result.rows if r.prompt in ("wikigen/quality", "wikigen/rubric")]
    assert all(r.calls > 0 and r.prompt_tokens > 0 and r.cost_usd > 0 for r in judged)


def test_the_estimate_prices_each_panel_model_at_its_own_rates(
    lveval_data: Path, params: Params, tmp_path: Path
) -> None:
    """The validate stage's asks, per reference model: each priced with that model's prices,
    and the calls it foresees are the calls the panel makes."""
    from pipelines.evaluation.validate_settings import PanelModel

    data = tmp_path / "data"
    (data / "lveval").mkdir(parents=True)
    (data / "lveval" / "qa.parquet").write_bytes(
        (lveval_data.parent / "built" / "qa.parquet").read_bytes()
    )
    where = Workspace(ROOT, ROOT / "params.yaml", data)
    with openai_server(lambda body, n: ANSWER) as (url, seen):
        p = _params(params, url, tmp_path)
        dear = {"model": "dear", "input_cost_per_mtok": 2.0, "output_cost_per_mtok": 8.0}
        panel = [
            PanelModel(name="cheap", tier="low"),
            PanelModel(name="dear", tier="high", llm=dear),
        ]
        p = p.model_copy(
            update={
                "validate": p.validate.model_copy(
                    update={"models": panel, "datasets": ["lveval"], "full_context": False}
                )
            }
        )
        rows = {r.prompt: r for r in estimate(p, where, ["validate"]).rows}
        assert set(rows) == {"lveval/answer @ cheap", "lveval/answer @ dear"}
        cheap, dear_row = rows["lveval/answer @ cheap"], rows["lveval/answer @ dear"]
        assert seen.count == 0 and cheap.calls == dear_row.calls > 0
        for row, (inp, out) in ((cheap, (0.15, 0.6)), (dear_row, (2.0, 8.0))):
            expected = (row.prompt_tokens * inp + row.completion_tokens * out) / 1e6
            assert row.cost_usd == pytest.approx(expected, abs=1e-6)
        run_stage("validate", p, where, out=tmp_path / "run")
        assert seen.count == cheap.calls + dear_row.calls
        assert {b["model"] for b in seen.bodies} == {"scripted", "dear"}


def test_the_estimate_says_how_many_failed_asks_a_rerun_retries(
    lveval_data: Path, params: Params, tmp_path: Path
) -> None:
    """A run whose server refused a third of the asks leaves them in its failure ledger; the
    estimate counts them among its calls and says a rerun asks each of them again."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "lveval").symlink_to(lveval_data / "lveval")
    where = Workspace(ROOT, ROOT / "params.yaml", data)
    refuse = [True]

    def reply(body: dict[str, Any], n: int) -> Any:
        if refuse[0] and zlib.crc32(json.dumps(body["messages"]).encode()) % 3 == 0:
            return 400, {}, '{"error": {"message": "context too long"}}'
        return ANSWER

    with openai_server(reply) as (url, seen):
        p = _params(params, url, tmp_path)
        run_stage("lveval_baselines", p, where, out=data / "lveval_baselines")
        failed = read_failures(data / "lveval_baselines" / FAILURES)
        assert failed and {r["kind"] for r in failed} == {"call_failed"}
        result = estimate(p, where, ["lveval_baselines"])
        assert result.to_dict()["retries"] == {
            "lveval_baselines": {
                "ledger": str(data / "lveval_baselines" / FAILURES),
                "failed": len(failed),
                "retried": len(failed),
            }
        }
        assert _row(result).calls == len(failed)  # the rest is in the cache
        out = Console(record=True, width=200)
        print_estimate(result.to_dict(), out)
        assert f"a rerun asks {len(failed)} of them again" in out.export_text()
        refuse[0] = False
        sent = seen.count
        run_stage("lveval_baselines", p, where, out=data / "lveval_baselines")
        assert seen.count - sent == len(failed)  # exactly the failed asks went again
        assert read_failures(data / "lveval_baselines" / FAILURES) == []
        assert estimate(p, where, ["lveval_baselines"]).to_dict()["retries"] == {}


def test_the_estimate_prices_batch_mode_at_the_batch_rates(
    lveval_data: Path, params: Params, tmp_path: Path
) -> None:
    """Batch calls are priced at half the sync prices unless batch prices are set; the
    calls and tokens foreseen are the same in either mode."""
    where = Workspace(ROOT, ROOT / "params.yaml", lveval_data)
    with openai_server(lambda body, n: ANSWER) as (url, seen):
        p = _params(params, url, tmp_path)
        sync = _row(estimate(p, where, ["lveval_baselines"]))
        rows = {}
        for name, prices in (("half", {}), ("set", {"batch_output_cost_per_mtok": 0.1})):
            llm = p.llm.model_copy(update={"mode": "batch", **prices})
            result = estimate(p.model_copy(update={"llm": llm}), where, ["lveval_baselines"])
            assert result.to_dict()["mode"] == "batch"
            rows[name] = _row(result)
    assert seen.count == 0
    assert {(r.calls, r.prompt_tokens, r.completion_tokens) for r in rows.values()} == {
        (sync.calls, sync.prompt_tokens, sync.completion_tokens)
    }
    assert rows["half"].cost_usd == pytest.approx(sync.cost_usd / 2, abs=2e-6)
    expected = (sync.prompt_tokens * 0.075 + sync.completion_tokens * 0.1) / 1e6
    assert rows["set"].cost_usd == pytest.approx(expected, abs=1e-6)
