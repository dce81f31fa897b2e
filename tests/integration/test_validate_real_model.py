"""The reference panel with a real model: the template backend (tier high) and SmolLM2-135M
behind the schema-enforcing test server (tier low) validate a few LV-Eval items, one
WikiGenBench lead and one small SummHay haystack. Every label follows from the two models' real
answers, a failed answer is never counted as wrong, and a rerun asks nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchsmith_scoring.sentences import sentences
from builders.validation import CASCADE, CLOSED_BOOK, EVIDENCE
from pipelines.evaluation.validate_settings import PanelModel, ValidateSettings
from pipelines.settings import Params
from pipelines.stages.validate import run_validate
from tests.support.llm_cache import unusable_answers
from tests.support.smollm import SmolLMServer, llm_settings

pytestmark = pytest.mark.integration

ITEMS = 3
DOCUMENTS = 2
LEAD_SENTENCES = 3


def _rows(path: Path) -> list[dict[str, Any]]:
    return pq.read_table(path).to_pylist()


def _small_inputs(lveval_data: Path, entries: Path, chunks: Path, haystacks: Path,
                  folder: Path) -> dict[str, Path]:  # fmt: skip
    """ITEMS QA items, the first entry (its lead cut to LEAD_SENTENCES) with its chunks, one
    haystack cut to DOCUMENTS documents and the insights they carry."""
    folder.mkdir()
    out = {k: folder / f"{k}.parquet" for k in ("qa", "entries", "chunks", "haystacks")}
    pq.write_table(pq.read_table(lveval_data.parent / "built" / "qa.parquet").slice(0, ITEMS),
                   out["qa"])  # fmt: skip
    entry = _rows(entries)[0]
    lead = entry["summary"]
    entry["summary"] = lead[: sentences(lead)[LEAD_SENTENCES - 1][1]]
    pq.write_table(pa.Table.from_pylist([entry], schema=pq.read_schema(entries)), out["entries"])
    event = entry["event_id"]
    pq.write_table(
        pa.Table.from_pylist(
            [c for c in _rows(chunks) if c["entry_id"] == event], schema=pq.read_schema(chunks)
        ),
        out["chunks"],
    )
    haystack = _rows(haystacks)[0]
    kept = haystack["documents"][:DOCUMENTS]
    ids = {d["document_id"] for d in kept}
    for subtopic in haystack["subtopics"]:
        subtopic["insights"] = [
            i | {"gold_document_ids": [g for g in i["gold_document_ids"] if g in ids]}
            for i in subtopic["insights"]
            if ids & set(i["gold_document_ids"])
        ]
    haystack["documents"] = kept
    pq.write_table(pa.Table.from_pylist([haystack], schema=pq.read_schema(haystacks)),
                   out["haystacks"])  # fmt: skip
    return out


def test_a_template_and_smollm2_panel_labels_items_from_their_real_answers(
    server: SmolLMServer,
    lveval_data: Path,
    snapshot_entries: Path,
    snapshot_chunks: Path,
    snapshot_haystacks: Path,
    params: Params,
    tmp_path: Path,
) -> None:
    inputs = _small_inputs(lveval_data, snapshot_entries, snapshot_chunks, snapshot_haystacks,
                           tmp_path / "in")  # fmt: skip
    smollm = llm_settings(server, tmp_path / "llm.sqlite", max_tokens=16)
    keys = ("backend", "base_url", "model", "response_format", "max_tokens", "reasks",
            "retries", "concurrency", "timeout_s")  # fmt: skip
    settings = ValidateSettings(
        models=[
            PanelModel(name="template", tier="high"),
            PanelModel(name="smollm2", tier="low", llm={k: getattr(smollm, k) for k in keys}),
        ],
        premise_chunks=1,
        noise_floor=False,  # the scripted panel's test covers it
    )
    llm = params.llm.model_copy(update={"cache": tmp_path / "llm.sqlite"})

    def run(out: Path) -> dict[str, Any]:
        run_validate(settings, **inputs, out=out, llm=llm, ak=params.lveval_baselines)
        return json.loads((out / "stats.json").read_text())

    stats = run(tmp_path / "out")
    answers = _rows(tmp_path / "out" / "answers.parquet")
    labels = _rows(tmp_path / "out" / "labels.parquet")
    assert {a["model"] for a in answers} == {"template", "smollm2"}
    real = [a for a in answers if a["model"] == "smollm2"]
    assert stats["panel"]["smollm2"]["calls"] > 0 and any(a["status"] == "ok" for a in real)
    assert all(a["reason"] for a in answers if a["status"] == "failed")
    assert {r["dataset"] for r in labels} == {"lveval", "wikigenbench", "summhay"}
    for label in labels:
        mine = [a for a in answers if (a["dataset"], a["item_id"]) == (label["dataset"],
                                                                        label["item_id"])]  # fmt: skip
        scored = {a["model"]: a["score"] for a in mine
                  if a["condition"] == EVIDENCE and a["score"] is not None}  # fmt: skip
        right = {m for m, s in scored.items() if s >= settings.correct_at}
        assert label["answered"] == len(scored)
        assert label["failed"] == sum(a["status"] == "failed" for a in mine)
        if not scored:
            assert label["solvable"] is None and label["difficulty"] is None
            continue
        assert label["solvable"] == pytest.approx(len(right) / len(scored))
        tiers = {"template": "high", "smollm2": "low"}
        failing = [lvl for tier, lvl in CASCADE
                   if any(tiers[m] == tier for m in scored)
                   and not any(tiers[m] == tier for m in right)]  # fmt: skip
        assert label["difficulty"] == (failing[0] if failing else "easy")
        closed = [
            a["score"] for a in mine if a["condition"] == CLOSED_BOOK and a["score"] is not None
        ]
        if label["dataset"] == "lveval" and closed:
            assert label["closed_book"] == pytest.approx(
                sum(s >= settings.correct_at for s in closed) / len(closed)
            )
    calls = stats["panel"]["smollm2"]["calls"]
    bad = unusable_answers(tmp_path / "llm.sqlite")
    again = run(tmp_path / "again")
    # only failed asks and answers the cache will not serve (cut, rejected) go again
    assert again["panel"]["smollm2"]["calls"] <= stats["llm"]["failed"] + bad
    assert calls > 0
