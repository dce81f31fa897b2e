"""The summhay stage on the snapshot: template haystacks, variants, public layout, accounting."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from builders.drops import DROP_SCHEMA
from builders.summhay.records import HAYSTACK_SCHEMA, ORDER_SCHEMA, Haystack
from builders.wikigen.entries import event_id
from builders.wikigen.records import Article
from pipelines.settings import Params
from pipelines.stages.summhay import run_summhay


@pytest.fixture(scope="module")
def inputs(snapshot_data: Path) -> tuple[Path, Path]:
    return snapshot_data / "wiki" / "articles.parquet", snapshot_data / "web" / "documents.parquet"


def build(params: Params, inputs: tuple[Path, Path], out: Path, **summhay: object):
    llm = params.llm.model_copy(update={"cache": out.parent / "llm.sqlite"})
    settings = params.summhay.model_copy(update=summhay)
    return run_summhay(settings, articles=inputs[0], documents=inputs[1], out=out, llm=llm)


def test_stage_writes_verified_haystacks_variants_and_stats(
    tmp_path: Path, params: Params, inputs
) -> None:
    out = tmp_path / "summhay"
    stats = build(params, inputs, out)
    s = params.summhay
    table = pq.read_table(out / "haystacks.parquet")
    assert table.schema.equals(HAYSTACK_SCHEMA, check_metadata=False)
    haystacks = [Haystack.from_row(r) for r in table.to_pylist()]
    assert len(haystacks) == len(s.topics) + s.topics_from_events == stats.counts["haystacks"]
    assert {h.topic.source.split(":")[0] for h in haystacks} == {"params", "event"}
    for h in haystacks:
        assert len(h.subtopics) == s.subtopics and len(h.documents) == s.documents
        for insight in h.insights:
            gold = h.gold(insight.insight_id)
            assert gold and all(
                insight.text in d.text for d in h.documents if d.document_id in gold
            )
        official = json.loads((out / "official" / f"topic_{h.topic.topic_id}.json").read_text())
        included = {d["document_id"]: set(d["insights_included"]) for d in official["documents"]}
        known = {i.insight_id for i in h.insights}
        assert included == {d.document_id: set(d.insight_ids) & known for d in h.documents}
        # what SummHay's scripts read besides: the oracle's scores, empty summaries and verdicts
        for sub in official["subtopics"]:
            assert set(sub["retriever"]) == {"oracle"}
            assert sub["summaries"] == sub["eval_summaries"] == {}

    orders = pq.read_table(out / "orders.parquet")
    assert orders.schema.equals(ORDER_SCHEMA, check_metadata=False)
    assert orders.num_rows == 4 * sum(len(h.subtopics) for h in haystacks)
    assert pq.read_table(out / "drops.parquet").schema.equals(DROP_SCHEMA, check_metadata=False)

    saved = json.loads((out / "stats.json").read_text())
    llm = saved["llm"]
    assert llm["backend"] == "template" and llm["failed"] == 0
    assert llm["by_prompt"]["summhay/document"]["calls"] == len(haystacks) * s.documents
    assert set(llm["prompt_versions"]) >= {"summhay/document", "summhay/inclusion"}
    assert not [p for p in out.iterdir() if p.name.startswith(".tmp")]


def test_stage_is_deterministic_and_a_rerun_replaces_the_official_folder(
    tmp_path: Path, params: Params, inputs
) -> None:
    first, second = tmp_path / "a" / "summhay", tmp_path / "b" / "summhay"
    build(params, inputs, first)
    build(params, inputs, second)
    assert pq.read_table(first / "haystacks.parquet").equals(
        pq.read_table(second / "haystacks.parquet")
    )
    assert pq.read_table(first / "orders.parquet").equals(pq.read_table(second / "orders.parquet"))

    build(params, inputs, first, topics_from_events=0)
    assert [p.name for p in (first / "official").iterdir()] == ["topic_conv1.json"]
    assert pq.read_table(first / "haystacks.parquet").num_rows == 1


def test_event_topics_draw_filler_from_their_own_documents(
    tmp_path: Path, params: Params, inputs
) -> None:
    out = tmp_path / "summhay"
    build(params, inputs, out)
    docs = pq.read_table(inputs[1], columns=["event_id", "status", "text"]).to_pylist()
    for row in pq.read_table(out / "haystacks.parquet").to_pylist():
        h = Haystack.from_row(row)
        if not h.topic.source.startswith("event:"):
            continue
        event = h.topic.source.removeprefix("event:")
        own = " ".join(
            " ".join(d["text"].split())
            for d in docs
            if d["event_id"] == event and d["status"] == "ok"
        )
        sentences = [s for d in h.documents for s in d.text.split("\n\n")[1].split(". ")[:1]]
        assert sentences and all(s.rstrip(".") in own for s in sentences)


def test_an_event_without_lead_or_documents_still_gets_a_topic_and_leaves_the_rest_alone(
    tmp_path: Path, params: Params, inputs, snapshot_haystacks: Path
) -> None:
    articles, documents = inputs
    table = pq.read_table(articles)
    first, *rest = table.to_pylist()
    bare = {**first, "summary": ""}
    pq.write_table(pa.Table.from_pylist([bare, *rest], schema=table.schema), tmp_path / "a.parquet")
    docs = pq.read_table(documents)
    event = event_id(Article.from_row(first))
    pq.write_table(docs.filter(pc.not_equal(docs["event_id"], event)), tmp_path / "d.parquet")
    out = tmp_path / "summhay"
    stats = build(params, (tmp_path / "a.parquet", tmp_path / "d.parquet"), out)

    before = {r["topic_id"]: r for r in pq.read_table(snapshot_haystacks).to_pylist()}
    after = {r["topic_id"]: r for r in pq.read_table(out / "haystacks.parquet").to_pylist()}
    assert after.keys() == before.keys() and stats.counts["haystacks"] == len(before)
    degenerate = f"event-{first['page_id']}"
    assert all(after[t] == before[t] for t in before if t != degenerate)
    # the bare event is named by its title and written around the shared filler
    assert after[degenerate]["topic"] == first["title"] and after[degenerate]["documents"]
    assert not stats.dropped
