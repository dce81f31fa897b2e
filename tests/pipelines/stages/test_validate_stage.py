"""The validate stage: a reference panel answers every item with its evidence, closed-book and
with another item's evidence; labels, drops and the report follow from the answers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from builders.validation import CLOSED_BOOK, EVIDENCE, FULL_CONTEXT, SHUFFLED
from pipelines.errors import LLMError
from pipelines.evaluation.validate_probes import full_contexts
from pipelines.evaluation.validate_settings import PanelModel, ValidateSettings
from pipelines.failure_ledger import FAILURES, read_failures
from pipelines.settings import Params
from pipelines.stages.validate import run_validate, summary
from tests.support.batch_server import batch_server
from tests.support.openai_server import openai_server

QUESTION = re.compile(r"Question: (.*?)\nAnswer:", re.S)
ARTICLE = re.compile(r"Article: (.*?)\n\nPlease answer", re.S)
REFUSAL = "I don't know."


@pytest.fixture()
def inputs(lveval_data: Path, snapshot_entries: Path, snapshot_chunks: Path,
           snapshot_haystacks: Path) -> dict[str, Path]:  # fmt: skip
    return {
        "qa": lveval_data.parent / "built" / "qa.parquet",
        "records": lveval_data.parent / "built" / "records",
        "entries": snapshot_entries,
        "chunks": snapshot_chunks,
        "haystacks": snapshot_haystacks,
    }


def run(settings: ValidateSettings, inputs: dict[str, Path], out: Path, params: Params,
        cache: Path) -> Any:  # fmt: skip
    llm = params.llm.model_copy(update={"cache": cache})
    return run_validate(settings, **inputs, out=out, llm=llm, ak=params.lveval_baselines)


def table(path: Path) -> list[dict[str, Any]]:
    return pq.read_table(path).to_pylist()


def test_a_template_panel_labels_every_item_from_its_answers(
    inputs: dict[str, Path], params: Params, tmp_path: Path
) -> None:
    settings = ValidateSettings()  # the configured model: the template backend
    stats = run(settings, inputs, tmp_path / "out", params, tmp_path / "llm.sqlite")
    answers = table(tmp_path / "out" / "answers.parquet")
    labels = {(r["dataset"], r["item_id"]): r for r in table(tmp_path / "out" / "labels.parquet")}
    qa = table(inputs["qa"])
    assert {i for d, i in labels if d == "lveval"} == {r["qa_id"] for r in qa}
    assert {d for d, _ in labels} == {"lveval", "wikigenbench", "summhay"}
    for (dataset, item), label in labels.items():
        mine = [a for a in answers if (a["dataset"], a["item_id"]) == (dataset, item)]
        evidence = [a["score"] for a in mine if a["condition"] == EVIDENCE]
        assert label["solvable"] == sum(s >= 0.65 for s in evidence) / len(evidence)
        # one model: LongBench Pro's level follows its full-context answer where it has one
        full = [a["score"] for a in mine if a["condition"] == FULL_CONTEXT] or evidence
        assert label["difficulty"] == ("easy" if full[0] >= 0.65 else "extreme")
        closed = [a for a in mine if a["condition"] == CLOSED_BOOK]
        assert (label["closed_book"] is None) == (dataset != "lveval")
        # the template reads only what it is shown: nothing closed-book
        assert all(a["answer"] == REFUSAL and a["score"] == 0 for a in closed)
        assert label["status"] == "kept" and label["reason"] == ""
    assert any(a["condition"] == SHUFFLED for a in answers)
    report = json.loads((tmp_path / "out" / "validate.json").read_text())
    assert report["panel"] == [
        {"name": "configured", "tier": "high", "backend": "template", "model": "template"}
    ]
    assert sum(report["difficulty"]["lveval"].values()) == len(qa)
    assert set(report["noise_floor"]) == {"lveval", "wikigenbench", "summhay"}
    assert "a panel of 1 labelled" in summary(stats, tmp_path / "out")


def scripted_panel(qa: list[dict[str, Any]], failing: str) -> Any:
    """Answers by tier and item k: high right with the evidence unless k % 4 == 3, mid when
    k % 4 < 2, low when k % 4 == 0; closed-book only high, on k % 4 == 0; never with another
    item's evidence. ``failing`` (a question) gets a 500 from the low model with its evidence."""
    index = {r["question"]: k for k, r in enumerate(qa)}
    right_with = {"m-high": {0, 1, 2}, "m-mid": {0, 1}, "m-low": {0}}

    def reply(body: dict[str, Any], n: int) -> Any:
        text = body["messages"][-1]["content"]
        question = QUESTION.search(text).group(1).strip()  # type: ignore[union-attr]
        context = ARTICLE.search(text).group(1)  # type: ignore[union-attr]
        k, row, model = index[question], qa[index[question]], body["model"]
        own = all(e["text"] in context for e in row["evidence"])
        if model == "m-low" and question == failing and own:
            return 500, {}, '{"error": {"message": "overloaded"}}'
        if not context.strip():
            right = model == "m-high" and k % 4 == 0
        else:
            right = own and k % 4 in right_with[model]
        return row["answers"][0] if right else REFUSAL

    return reply


def test_a_scripted_panel_gives_exact_levels_shares_and_drops(
    inputs: dict[str, Path], params: Params, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    qa = table(inputs["qa"])
    assert len(qa) >= 8
    with openai_server(scripted_panel(qa, failing=qa[1]["question"])) as (url, seen):
        common = {"backend": "openai", "base_url": url, "retries": 0, "reasks": 0}
        settings = ValidateSettings(
            models=[
                PanelModel(name=m, tier=m[2:], llm={**common, "model": m})  # type: ignore[arg-type]
                for m in ("m-high", "m-mid", "m-low")
            ],
            datasets=["lveval"],
            min_solvable=0.5,
        )
        run(settings, inputs, tmp_path / "out", params, tmp_path / "llm.sqlite")
        # every model, every item, four conditions (full context: every item has a record)
        assert len(full_contexts(inputs["records"])) == len(qa)
        assert seen.count == 3 * 4 * len(qa)
        labels = {r["item_id"]: r for r in table(tmp_path / "out" / "labels.parquet")}
        for k, row in enumerate(qa):
            label = labels[row["qa_id"]]
            if k == 1:  # the low model failed (evidence, full context): neither right nor wrong
                expected = (1.0, "easy", 2, 2)
            else:
                solvable = [1.0, 2 / 3, 1 / 3, 0.0][k % 4]
                expected = (solvable, ["easy", "moderate", "hard", "extreme"][k % 4], 3, 0)
            got = (label["solvable"], label["difficulty"], label["answered"], label["failed"])
            assert got == pytest.approx(expected), k
            assert label["closed_book"] == pytest.approx(1 / 3 if k % 4 == 0 else 0.0)
            dropped = k % 4 >= 2
            assert label["status"] == ("dropped" if dropped else "kept")
            if dropped:
                right = 1 if k % 4 == 2 else 0
                assert label["reason"] == (
                    f"unsolvable: {right} of 3 reference models answered correctly with the "
                    f"evidence (solvable {right / 3:.2f} < min_solvable 0.5)"
                )
        report = json.loads((tmp_path / "out" / "validate.json").read_text())
        assert report["models"]["m-low"]["failed"] == 2
        assert report["models"]["m-low"]["failed_call_failed"] == 2
        ledger = read_failures(tmp_path / "out" / FAILURES)
        assert [(r["model"], r["prompt"], r["kind"], r["attempts"]) for r in ledger] == [
            ("m-low", "lveval/answer", "call_failed", 1)
        ] * 2
        assert all(r["reason"].startswith("call_failed: HTTP 500") for r in ledger)
        assert report["dropped"] == {"lveval": sum(k % 4 >= 2 for k in range(len(qa)))}
        assert report["noise_floor"]["lveval"]["correct_share"] == 0.0
        stats = json.loads((tmp_path / "out" / "stats.json").read_text())
        assert set(stats["panel"]) == {"m-high", "m-mid", "m-low"}
        assert stats["llm"]["calls"] == seen.count
        assert set(stats["llm"]["by_prompt"]) == {f"lveval/answer @ {m}" for m in stats["panel"]}
        before = (tmp_path / "out" / "labels.parquet").read_bytes()
        run(settings, inputs, tmp_path / "again", params, tmp_path / "llm.sqlite")
        # answered from the cache but for the two failed asks, asked again
        assert seen.count == 3 * 4 * len(qa) + 2
        assert (tmp_path / "again" / "labels.parquet").read_bytes() == before
        assert {r["key"] for r in read_failures(tmp_path / "again" / FAILURES)} == {
            r["key"] for r in ledger
        }


def test_a_model_that_fails_every_call_stops_the_stage_before_any_label(
    inputs: dict[str, Path], params: Params, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    down = (503, {}, '{"error": {"message": "down for maintenance"}}')
    with openai_server(lambda body, n: down) as (url, _):
        dead = {"backend": "openai", "base_url": url, "model": "dead", "retries": 0}
        settings = ValidateSettings(
            models=[
                PanelModel(name="configured", tier="high"),
                PanelModel(name="m-dead", tier="mid", llm=dead),
            ],
            datasets=["lveval"],
        )
        with pytest.raises(LLMError, match=r"'m-dead' \(openai dead\) failed all \d+ asks.*503"):
            run(settings, inputs, tmp_path / "out", params, tmp_path / "llm.sqlite")
    assert not (tmp_path / "out").exists()


def test_panel_models_are_checked_when_the_params_are_read() -> None:
    with pytest.raises(ValueError, match="used twice: a"):
        ValidateSettings(
            models=[PanelModel(name="a", tier="high"), PanelModel(name="a", tier="low")]
        )
    with pytest.raises(ValueError, match="max_tokens"):
        PanelModel(name="b", tier="mid", llm={"max_tokens": "many"})
    with pytest.raises(ValueError, match="no_such_key"):
        PanelModel(name="b", tier="mid", llm={"no_such_key": 1})
    with pytest.raises(ValueError, match="tier"):
        PanelModel(name="b", tier="top")  # type: ignore[arg-type]


def test_a_panel_model_in_batch_mode_labels_as_in_sync_mode(
    inputs: dict[str, Path], params: Params, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The high model's asks go through the Batch API stand-in (one job), the mid model's
    one by one; the labels equal a run with both in sync mode."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    qa = table(inputs["qa"])
    with batch_server(scripted_panel(qa, failing="")) as (url, seen):

        def panel(mode: str) -> ValidateSettings:
            common = {"backend": "openai", "base_url": url, "retries": 0, "reasks": 0}
            batch = {"mode": mode, "batch_poll_s": 0.01} if mode == "batch" else {}
            return ValidateSettings(
                models=[PanelModel(name="m-high", tier="high", llm={**common, **batch,
                                                                    "model": "m-high"}),
                        PanelModel(name="m-mid", tier="mid", llm={**common, "model": "m-mid"})],
                datasets=["lveval"],
            )  # fmt: skip

        run(panel("batch"), inputs, tmp_path / "batch", params, tmp_path / "b.sqlite")
        assert len(seen.created) == 1 and len(seen.inputs[0]) == 4 * len(qa)
        assert {b["model"] for b in seen.chat_bodies} == {"m-mid"}
        run(panel("sync"), inputs, tmp_path / "sync", params, tmp_path / "s.sqlite")
    stats = json.loads((tmp_path / "batch" / "stats.json").read_text())
    assert stats["panel"]["m-high"]["mode"] == "batch"
    assert table(tmp_path / "batch" / "labels.parquet") == table(
        tmp_path / "sync" / "labels.parquet"
    )
