"""The LV-Eval baselines embed every distinct chunk once, in bulk, before ranking: the ranking
pass reads every vector back from the embedding cache, a rerun embeds nothing, and the tables
are those of ranking record by record without a cache."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.embed.settings import EmbedSettings
from pipelines.evaluation.lveval import Chunker
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.evaluation.lveval_prefill import executor_settings
from pipelines.llm import LLMSettings
from pipelines.retrieval.settings import RetrievalSettings
from pipelines.stages.lveval_baselines import run_lveval_baselines
from tests.pipelines.evaluation.test_lveval_streaming import record, write
from tests.support.tiny_encoder import save_tiny_bert

SETTINGS = LVEvalBaselines(retrievers=["bm25", "dense"], answer=False, chunk_words=64)


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory, passages: list[str]) -> Path:
    """Two files whose records share most passages, as an item's levels and variants do."""
    folder = tmp_path_factory.mktemp("records")
    write([record(i, passages[i : i + 6]) for i in range(4)], folder / "events_mixup_2k.parquet")
    write([record(i, passages[i : i + 12]) for i in range(4)], folder / "events_mixup_4k.parquet")
    return folder


@pytest.fixture(scope="module")
def retrieval(tmp_path_factory: pytest.TempPathFactory) -> RetrievalSettings:
    """The dense retriever on a tiny BERT (MiniLM's tokenizer), so that embedding is quick."""
    tiny = save_tiny_bert(tmp_path_factory.mktemp("tiny") / "tiny-bert")
    return RetrievalSettings(dense_model=str(tiny))


def distinct_chunks(records: Path) -> int:
    chunker, texts = Chunker(SETTINGS.chunk_words), set()
    for path in sorted(records.glob("*.parquet")):
        for context in pq.read_table(path, columns=["context"]).column("context").to_pylist():
            texts |= {context[a:b] for a, b in chunker.spans(context)}
    return len(texts)


def run(records: Path, out: Path, retrieval: RetrievalSettings, cache: Path | None, **embed):
    run_lveval_baselines(
        SETTINGS, records=records, out=out, llm=LLMSettings(), retrieval=retrieval,
        embed_cache=cache, embed=EmbedSettings(**embed) if embed else None,
    )  # fmt: skip
    return json.loads((out / "stats.json").read_text())


def test_each_distinct_chunk_is_embedded_once_before_ranking(records, retrieval, tmp_path):
    cache = tmp_path / "vectors.sqlite"
    first = run(records, tmp_path / "first", retrieval, cache, block_rows=32)
    distinct = distinct_chunks(records)
    assert first["dense_prefill"] | {"seconds": 0, "throughput": 0} == {
        "executor": "local", "distinct_chunks": distinct, "from_cache": 0, "embedded": distinct,
        "seconds": 0, "throughput": 0,
    }  # fmt: skip
    assert first["dense_prefill"]["throughput"]["tokens"] > 0
    # the ranking pass asked for every chunk of every record and embedded none of them
    dense = first["dense_chunks"]
    assert dense["embedded"] == 0 and dense["asked"] > distinct
    assert dense["disk_hits"] == distinct
    assert not (tmp_path / "first" / "dense_todo").exists()

    again = run(records, tmp_path / "again", retrieval, cache)
    assert again["dense_prefill"]["embedded"] == 0
    assert again["dense_prefill"]["from_cache"] == distinct

    # without an embedding cache there is no bulk pass: chunks are embedded record by record
    alone = run(records, tmp_path / "alone", retrieval, None)
    assert "dense_prefill" not in alone and alone["dense_chunks"]["embedded"] == distinct
    for name in ("retrieval.parquet", "lveval.json"):
        a, b = tmp_path / "first" / name, tmp_path / "alone" / name
        assert a.read_bytes() == b.read_bytes(), name


def test_the_executor_encoder_is_the_dense_retrievers(retrieval):
    embed = EmbedSettings(dtype="bfloat16", quantize="int8", backend="auto", executor="ray")
    settings = executor_settings(embed, retrieval.dense_model)
    assert (settings.model, settings.dtype, settings.quantize, settings.backend) == (
        retrieval.dense_model, "float32", "none", "torch"
    )  # fmt: skip
    assert settings.executor == "ray" and settings.ray == embed.ray
