"""The contamination stage: closed-book probes of LV-Eval questions and WikiGenBench titles, on
the snapshot, with the template backend (knows nothing) and with a real local OpenAI-compatible
server scripted to know a chosen set of items."""

from __future__ import annotations

import json
import re
from datetime import UTC, date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders.contamination import report_markdown
from builders.wikigen.generation import reference_article
from pipelines.dag.invoke import Workspace, run_stage
from pipelines.errors import MissingInputError
from pipelines.evaluation.contamination import ITEM_SCHEMA, REFUSAL, closed_book_responders
from pipelines.settings import Params
from pipelines.stages.contamination import run_contamination, summary
from pipelines.stats import StageStats
from tests.pipelines.llm.conftest import settings_for
from tests.support.openai_server import openai_server
from tests.support.snapshot import ROOT

CUTOFF = date(2026, 5, 31)
KEY_ENV = "BENCHSMITH_TEST_CONTAMINATION_KEY"
REPORT_KEYS = {
    "model", "cutoff", "metrics", "thresholds", "probed", "failed", "overall",
    "before_after_cutoff", "by_month", "flagged",
}  # fmt: skip


@pytest.fixture(scope="module")
def qa(snapshot_entries: Path, params: Params, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The snapshot's LV-Eval QA items (lveval stage at its smallest level, template backend)."""
    data = tmp_path_factory.mktemp("contamination-lveval") / "data"
    small = params.model_copy(
        update={"lveval": params.lveval.model_copy(update={"levels": ["2k"]})}
    )
    where = Workspace(ROOT, ROOT / "params.yaml", data)
    run_stage("lveval", small, where, entries=snapshot_entries, out=data / "lveval")
    return data / "lveval" / "qa.parquet"


def _entries(path: Path) -> list[dict[str, Any]]:
    return pq.read_table(path, columns=["event_id", "title", "created_at", "summary",
                                        "sections"]).to_pylist()  # fmt: skip


def test_the_template_backend_reads_nothing_so_says_nothing() -> None:
    answer = closed_book_responders()
    asked = {"qa_id": "q", "question": "When did Cyclone Imre take place?", "context": "",
             "length_instruction": ""}  # fmt: skip
    assert answer["lveval/answer"](asked) == REFUSAL
    assert answer["wikigen/rr"]({"title": "Cyclone Imre", "documents": []}) == REFUSAL
    # shown a document, the same readers still read it
    text = "Cyclone Imre formed on 14 January near Port Imre and killed 23 people."
    shown = {**asked, "context": text}
    assert "14 January" in answer["lveval/answer"](shown)
    written = answer["wikigen/rr"]({"title": "Cyclone Imre", "documents": [{"n": 1, "text": text}]})
    assert written.startswith("==Introduction==") and "[1]" in written


@pytest.fixture(scope="module")
def template_result(
    qa: Path, snapshot_entries: Path, params: Params, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, StageStats]:
    out = tmp_path_factory.mktemp("contamination-template") / "contamination"
    where = Workspace(ROOT, ROOT / "params.yaml", out.parent)
    stats = run_stage("contamination", params, where, qa=qa, entries=snapshot_entries, out=out)
    return out, stats


@pytest.fixture(scope="module")
def template_run(template_result: tuple[Path, StageStats]) -> Path:
    return template_result[0]


def test_the_template_backend_probes_everything_and_flags_nothing(
    template_result: tuple[Path, StageStats], qa: Path, snapshot_entries: Path, params: Params
) -> None:
    template_run, template_stats = template_result
    table = pq.read_table(template_run / "items.parquet")
    assert table.schema.equals(ITEM_SCHEMA, check_metadata=False)
    rows = table.to_pylist()
    questions = pq.read_table(qa).to_pylist()
    entries = _entries(snapshot_entries)
    assert [r["item_id"] for r in rows if r["dataset"] == "lveval"] == [
        q["qa_id"] for q in questions
    ]
    assert [r["item_id"] for r in rows if r["dataset"] == "wikigenbench"] == [
        e["event_id"] for e in entries
    ]
    created = {e["event_id"]: e["created_at"] for e in entries}
    for row in rows:
        assert row["status"] == "ok" and row["answer"] == REFUSAL and row["model"] == "template"
        assert not row["flagged"]
        assert row["event_created_at"] == created[row["event_id"]]
        assert row["event_month"] == row["event_created_at"].strftime("%Y-%m")
        threshold = getattr(params.contamination.thresholds, row["dataset"])
        assert row["score"] < threshold
    source = {q["qa_id"]: q["source"] for q in questions}
    assert all(source[r["item_id"]] == r["event_id"] for r in rows if r["dataset"] == "lveval")
    assert {r["score"] for r in rows if r["dataset"] == "lveval"} == {0.0}

    report = json.loads((template_run / "contamination.json").read_text())
    assert set(report) == REPORT_KEYS
    assert report["probed"] == {"lveval": len(questions), "wikigenbench": len(entries)}
    assert report["failed"] == {"lveval": 0, "wikigenbench": 0}
    assert report["model"] == "template" and report["cutoff"] is None
    assert report["before_after_cutoff"] is None and report["flagged"] == []
    assert report["metrics"] == {"lveval": "AK (readme)", "wikigenbench": "ROUGE-L F1"}
    for name, months in report["by_month"].items():
        assert sum(m["items"] for m in months.values()) == report["probed"][name]
        assert all(m["flagged"] == 0 for m in months.values())
    stats = json.loads((template_run / "stats.json").read_text())
    assert stats["counts"]["lveval_probed"] == len(questions)
    assert stats["counts"]["wikigenbench_probed"] == len(entries)
    asked = stats["llm"]["by_prompt"]
    assert asked["lveval/answer"]["asks"] == len(questions)
    assert asked["wikigen/rr"]["asks"] == len(entries)
    line = summary(template_stats, template_run)
    assert "0 flagged" in line and f"{len(questions)} LV-Eval" in line
    assert summary(template_stats, template_run.parent / "absent") == (
        f"contamination: template asked closed-book ({len(questions)} LV-Eval, "
        f"{len(entries)} WikiGenBench); 0 flagged -> {template_run.parent / 'absent'}/"
    )

    text = report_markdown(report)
    assert "**template**" in text and "none given" in text and "No item was flagged." in text


def _known(qa: Path, entries: list[dict[str, Any]]) -> tuple[dict[str, str], dict[str, str]]:
    """What the scripted model knows: three LV-Eval questions (two events before the cutoff,
    one after) with their true answer, and three titles (one before, two after) with their
    reference article."""
    created = {e["event_id"]: e["created_at"].astimezone(UTC).date() for e in entries}
    questions = pq.read_table(qa).to_pylist()
    text_count: dict[str, int] = {}
    for q in questions:
        text_count[q["question"]] = text_count.get(q["question"], 0) + 1
    unique = [q for q in questions if text_count[q["question"]] == 1]
    before = [q for q in unique if created[q["source"]] <= CUTOFF]
    after = [q for q in unique if created[q["source"]] > CUTOFF]
    chosen_qa = [before[0], before[-1], after[len(after) // 2]]
    early = [e for e in entries if created[e["event_id"]] <= CUTOFF]
    late = [e for e in entries if created[e["event_id"]] > CUTOFF]
    chosen_titles = [early[1], late[0], late[-1]]
    answers = {q["question"]: q["answers"][0] for q in chosen_qa}
    articles = {
        e["title"]: reference_article(e["summary"], (s["text"] for s in e["sections"]))
        for e in chosen_titles
    }
    return answers, articles


def _scripted(answers: dict[str, str], articles: dict[str, str]):
    def reply(body: dict[str, Any], n: int) -> str:
        prompt = body["messages"][-1]["content"]
        if question := re.search(r"\nQuestion: (.+)\nAnswer:", prompt):
            return answers.get(question[1], "I don't know.")
        if title := re.search(r'I have a topic "(.+)" that contains', prompt):
            return articles.get(title[1], "I don't know.")
        return "I don't know."

    return reply


@pytest.fixture(scope="module")
def scripted_run(
    qa: Path,
    snapshot_entries: Path,
    params: Params,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, str], dict[str, str], list[dict[str, Any]]]:
    """The stage against a local OpenAI-compatible server that knows the chosen items."""
    tmp = tmp_path_factory.mktemp("contamination-scripted")
    answers, articles = _known(qa, _entries(snapshot_entries))
    settings = params.contamination.model_copy(update={"cutoff": CUTOFF})
    with pytest.MonkeyPatch.context() as mp, openai_server(_scripted(answers, articles)) as server:
        mp.setenv(KEY_ENV, "sk-local-test")
        url, seen = server
        llm = settings_for(url, tmp, api_key_env=KEY_ENV)
        run_contamination(
            settings, qa=qa, entries=snapshot_entries, out=tmp / "out", llm=llm,
            ak=params.lveval_baselines,
        )  # fmt: skip
    return tmp / "out", answers, articles, list(zip(seen.bodies, seen.headers, strict=True))


def test_a_model_that_knows_some_items_flags_exactly_them(
    scripted_run, qa: Path, snapshot_entries: Path
) -> None:
    out, answers, articles, seen = scripted_run
    # every ask was closed-book, and carried the key from the environment
    prompts = [body["messages"][-1]["content"] for body, _ in seen]
    assert all(headers["authorization"] == "Bearer sk-local-test" for _, headers in seen)
    asked = [p for p in prompts if "\nQuestion: " in p]
    written = [p for p in prompts if "I have a topic" in p]
    assert len(asked) + len(written) == len(prompts)
    assert all("Article: \n\n" in p for p in asked) and len(asked) == pq.read_table(qa).num_rows
    assert not any("Document 1:" in p for p in written)
    entries = _entries(snapshot_entries)
    questions = pq.read_table(qa).to_pylist()
    known = {("lveval", q["qa_id"]) for q in questions if q["question"] in answers}
    known |= {("wikigenbench", e["event_id"]) for e in entries if e["title"] in articles}
    assert len(known) == 6

    rows = pq.read_table(out / "items.parquet").to_pylist()
    assert all(r["status"] == "ok" and r["model"] == "local-test" for r in rows)
    assert {(r["dataset"], r["item_id"]) for r in rows if r["flagged"]} == known
    report = json.loads((out / "contamination.json").read_text())
    assert {(f["dataset"], f["item_id"]) for f in report["flagged"]} == known
    assert all(f["score"] >= 0.5 for f in report["flagged"])
    assert report["cutoff"] == "2026-05-31" and report["model"] == "local-test"

    # the shares before and after the cutoff, from the chosen items and the events' dates
    created = {e["event_id"]: e["created_at"].astimezone(UTC).date() for e in entries}
    items = {"lveval": [(q["qa_id"], q["source"]) for q in questions],
             "wikigenbench": [(e["event_id"], e["event_id"]) for e in entries]}  # fmt: skip
    for name, pairs in items.items():
        for side, on_side in (("before", lambda d: d <= CUTOFF), ("after", lambda d: d > CUTOFF)):
            mine = [item for item, event in pairs if on_side(created[event])]
            hits = [item for item in mine if (name, item) in known]
            group = report["before_after_cutoff"][name][side]
            assert (group["items"], group["flagged"]) == (len(mine), len(hits)), (name, side)
            assert group["flagged_share"] == pytest.approx(len(hits) / len(mine), abs=1e-4)
        assert report["before_after_cutoff"][name]["undated"]["items"] == 0
    by_month = report["by_month"]["wikigenbench"]
    assert sum(m["flagged"] for m in by_month.values()) == 3
    assert report["overall"]["lveval"]["flagged"] == 3


def test_the_report_section_names_model_cutoff_and_flagged_items(scripted_run) -> None:
    out = scripted_run[0]
    report = json.loads((out / "contamination.json").read_text())
    text = report_markdown(report)
    assert "**local-test**" in text and "**2026-05-31**" in text
    for flagged in report["flagged"]:
        assert f"`{flagged['item_id']}`" in text
    # one row per dataset: probed, failed, flagged overall, before and after the cutoff
    lveval = next(line for line in text.splitlines() if line.startswith("| LV-Eval | AK"))
    before = report["before_after_cutoff"]["lveval"]["before"]
    assert f"{before['flagged']}/{before['items']}" in lveval
    assert "### Closed-book scores by event month" in text and "| WikiGenBench | 2026-01 |" in text


def test_a_failed_ask_keeps_its_item_with_the_reason(
    snapshot_entries: Path, params: Params, tmp_path: Path
) -> None:
    def reply(body: dict[str, Any], n: int) -> Any:
        if "Cyclone Imre" in body["messages"][-1]["content"]:
            return 400, {}, json.dumps({"error": {"message": "refused"}})
        return "I don't know."

    settings = params.contamination.model_copy(update={"datasets": ["wikigenbench"]})
    with openai_server(reply) as (url, _):
        stats = run_contamination(
            settings, qa=tmp_path / "absent.parquet", entries=snapshot_entries,
            out=tmp_path / "out", llm=settings_for(url, tmp_path, retries=0),
            ak=params.lveval_baselines,
        )  # fmt: skip
    rows = pq.read_table(tmp_path / "out" / "items.parquet").to_pylist()
    assert len(rows) == len(_entries(snapshot_entries))
    (failed,) = [r for r in rows if r["status"] == "failed"]
    assert failed["reason"].startswith("call_failed") and failed["score"] is None
    assert not failed["flagged"]
    report = json.loads((tmp_path / "out" / "contamination.json").read_text())
    assert report["probed"] == {"wikigenbench": len(rows)}
    assert report["failed"] == {"wikigenbench": 1}
    assert report["overall"]["wikigenbench"]["items"] == len(rows) - 1
    assert stats.counts["wikigenbench_failed"] == 1 and stats.dropped["wikigenbench_call_failed"]


def test_a_missing_input_names_the_file_and_its_stage(
    snapshot_entries: Path, params: Params, tmp_path: Path
) -> None:
    where = Workspace(ROOT, ROOT / "params.yaml", tmp_path / "data")
    missing = tmp_path / "none.parquet"
    with pytest.raises(MissingInputError, match="the lveval stage writes it") as raised:
        run_stage("contamination", params, where, qa=missing, entries=snapshot_entries)
    assert str(missing) in str(raised.value)
    with pytest.raises(MissingInputError, match=r"none\.parquet \(the wikigen entries\)"):
        run_contamination(
            params.contamination, qa=missing, entries=missing, out=tmp_path / "out",
            llm=params.llm, ak=params.lveval_baselines,
        )  # fmt: skip
    assert not (tmp_path / "out").exists() and not (tmp_path / "data").exists()


def test_items_without_question_answer_or_reference_fail_unasked_beside_the_rest(
    template_run: Path, qa: Path, snapshot_entries: Path, params: Params, tmp_path: Path
) -> None:
    questions = pq.read_table(qa)
    first = questions.to_pylist()[0]
    odd = [first | {"qa_id": "x-blank", "question": " "},
           first | {"qa_id": "x-unanswered", "answers": [], "answer_keywords": ""}]  # fmt: skip
    pq.write_table(pa.concat_tables([questions, pa.Table.from_pylist(odd, questions.schema)]),
                   tmp_path / "qa.parquet")  # fmt: skip
    entries = pq.read_table(snapshot_entries)
    bare = entries.to_pylist()[0] | {"event_id": "x:bare", "summary": "", "sections": []}
    pq.write_table(pa.concat_tables([entries, pa.Table.from_pylist([bare], entries.schema)]),
                   tmp_path / "entries.parquet")  # fmt: skip
    where = Workspace(ROOT, ROOT / "params.yaml", tmp_path)
    stats = run_stage("contamination", params, where, qa=tmp_path / "qa.parquet",
                      entries=tmp_path / "entries.parquet", out=tmp_path / "out")  # fmt: skip

    rows = pq.read_table(tmp_path / "out" / "items.parquet").to_pylist()
    before = pq.read_table(template_run / "items.parquet").to_pylist()
    assert [r for r in rows if not r["item_id"].startswith("x")] == before
    reasons = {r["item_id"]: r["reason"] for r in rows if r["status"] == "failed"}
    assert reasons.keys() == {"x-blank", "x-unanswered", "x:bare"}
    assert reasons["x-blank"].startswith("no_question:")
    assert reasons["x-unanswered"].startswith("unscorable:")
    assert reasons["x:bare"].startswith("no_reference:")
    assert not any(r["flagged"] for r in rows if r["status"] == "failed")
    asked = json.loads((tmp_path / "out" / "stats.json").read_text())["llm"]["by_prompt"]
    assert asked["lveval/answer"]["asks"] == questions.num_rows + 1  # the blank one unasked
    assert asked["wikigen/rr"]["asks"] == entries.num_rows
    assert stats.counts["lveval_failed"] == 2 and stats.counts["wikigenbench_failed"] == 1
    line = summary(stats, tmp_path)
    assert f"{entries.num_rows + 1} WikiGenBench, 3 failed or not asked); 0 flagged" in line
