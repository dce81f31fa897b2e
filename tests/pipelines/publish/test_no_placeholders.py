"""No export carries a placeholder where a model's answer belongs: a failed ask makes its item a
drop with its reason, never a row with ``None``, an empty string or a sentinel word.

The snapshot's export is searched as published; then the model stages run again with a model
that fails every fourth request (lveval's synthesis, summhay's, the reference panel), and the
export built from them is searched too."""

from __future__ import annotations

import zlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.evaluation.validate_settings import ValidateSettings
from pipelines.failure_ledger import FAILURES, read_failures
from pipelines.llm.backends.base import CallFailed
from pipelines.llm.backends.template import TemplateBackend
from pipelines.llm.records import ChatRequest, ChatResponse
from pipelines.settings import Params
from pipelines.stages.lveval import run_lveval
from pipelines.stages.publish import run_publish
from pipelines.stages.summhay import run_summhay
from pipelines.stages.validate import run_validate
from tests.pipelines.publish.conftest import publish_settings
from tests.support.placeholders import placeholders, scan
from tests.support.snapshot import ROOT

LABELS = ("solvable", "closed_book", "difficulty")
MODEL_WRITTEN = {
    "lveval": (
        "question", "answers", "answer", "answer_keywords", "confusing_facts",
        "replacement_rules", *LABELS,
    ),
    "summhay": (
        "subtopic", "description", "query", "insights", "reference", "subtopics", "documents",
    ),
    "wikigenbench": LABELS,
}  # fmt: skip
"""The columns of each dataset's configs a model writes (synthesis, or the panel's labels)."""


def test_the_search_finds_what_a_failed_ask_could_leave() -> None:
    row = {"text": "fine", "insights": [{"text": " "}, {"text": "N/A", "score": float("nan")}]}
    found = [where for where, _ in placeholders(row, "row")]
    assert found == ["row.insights[].text", "row.insights[].text", "row.insights[].score"]
    assert list(placeholders({"items": [], "note": "Nonetheless"}, "row")) == []


def test_the_snapshot_export_has_no_placeholder(hub_export: Path) -> None:
    found, searched = scan(hub_export, MODEL_WRITTEN)
    assert searched > 1000
    assert not found, "\n".join(map(str, found[:10]))


def _failing(every: int) -> object:
    """TemplateBackend.complete, failing the requests whose messages hash to 0 mod ``every``."""
    answer = TemplateBackend.complete

    def complete(self: TemplateBackend, request: ChatRequest) -> ChatResponse:
        digest = zlib.crc32(request.messages_digest().encode())
        if digest % every == 0:
            raise CallFailed("HTTP 500: injected failure")
        return answer(self, request)

    return complete


def test_an_export_built_while_asks_fail_has_no_placeholder(
    publish_data: Path, params: Params, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TemplateBackend, "complete", _failing(4))
    data = tmp_path / "data"
    data.mkdir()
    for stage in publish_data.iterdir():
        if stage.name not in ("lveval", "summhay"):
            (data / stage.name).symlink_to(stage)
    llm = params.llm.model_copy(update={"cache": tmp_path / "llm.sqlite", "reasks": 0})
    run_summhay(
        params.summhay, articles=data / "wiki" / "articles.parquet",
        documents=data / "web" / "documents.parquet", out=data / "summhay", llm=llm,
    )  # fmt: skip
    run_lveval(params.lveval, entries=data / "wikigen" / "entries.parquet", out=data / "lveval",
               llm=llm, root=ROOT)  # fmt: skip
    run_validate(
        ValidateSettings(datasets=["lveval", "summhay", "wikigenbench"], full_context=False),
        qa=data / "lveval" / "qa.parquet", entries=data / "wikigen" / "entries.parquet",
        chunks=data / "chunk" / "chunks.parquet", haystacks=data / "summhay" / "haystacks.parquet",
        out=data / "validate", llm=llm, ak=params.lveval_baselines,
    )  # fmt: skip
    for stage in ("summhay", "lveval", "validate"):
        failed = read_failures(data / stage / FAILURES)
        assert "call_failed: HTTP 500: injected failure" in {r["reason"] for r in failed}
    labels = pq.read_table(data / "validate" / "labels.parquet").to_pylist()
    unlabelled = [r for r in labels if r["reason"].startswith("unlabelled")]
    assert unlabelled and all(r["status"] == "dropped" for r in unlabelled)

    out = tmp_path / "publish"
    run_publish(
        publish_settings(tmp_path, namespace="benchsmith-test"),
        data=data, out=out, root=ROOT, params_file=ROOT / "params.yaml",
    )  # fmt: skip
    found, searched = scan(out, MODEL_WRITTEN)
    assert searched > 500
    assert not found, "\n".join(map(str, found[:10]))
    # every unlabelled item is left out, named in its dataset's card
    for dataset in ("lveval", "summhay"):
        mine = [r for r in unlabelled if r["dataset"] == dataset]
        if mine:
            card = (out / dataset / "README.md").read_text()
            assert f"{len(mine)} unlabelled" in card, dataset
