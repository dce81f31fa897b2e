"""The LV-Eval baselines stream: records are read in row batches and answered as the client
asks, chunk spans and bags of words are computed once per distinct passage and chunk, and the
tables are the same whether anything was found already computed or not."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders.lveval.records import RECORD_SCHEMA, EvalRecord, Position
from builders.lveval.responders import answer_responders
from pipelines.embed.chunk import chunk_spans
from pipelines.embed.models import load_tokenizer
from pipelines.evaluation.lveval import Chunker, answer_all
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.evaluation.lveval_scoring import count_rows, read_records, score_records
from pipelines.llm import LLMClient, LLMSettings
from pipelines.retrieval.bm25 import BM25
from pipelines.retrieval.rankers import random_scores
from pipelines.retrieval.terms import Bags
from pipelines.retrieval.tfidf import TFIDF
from pipelines.stats import StageStats

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def passages() -> list[str]:
    """Passages of 30 to 700 words of the snapshot wiki's text."""
    words = re.sub(r"<[^>]+>", " ", (ROOT / "snapshot/wiki/export.xml").read_text()).split()
    rng = random.Random(30)
    out = []
    for _ in range(40):
        start = rng.randrange(len(words) - 700)
        out.append(" ".join(words[start : start + rng.randint(30, 700)]))
    return out


def record(i: int, texts: list[str], question: str = "") -> dict[str, Any]:
    """A record row whose context holds ``texts`` and whose evidence is the first's opening."""
    context = "\n\n".join(f"### Passage {n}\n{t}" for n, t in enumerate(texts, 1))
    start = context.find("\n") + 1 if texts else 0
    evidence = [Position("p1", 1, start, start + 20, 0.0, context[start : start + 20]).__dict__]
    return {"input": question or f"question {i} about {texts[0].split()[3] if texts else ''}",
            "context": context, "answers": ["5 March"], "length": len(context.split()),
            "dataset": "events_mixup", "language": "en", "answer_keywords": "5 March",
            "confusing_facts": [], "qa_id": f"q{i:03d}", "level": "2k", "level_words": 2000,
            "variant": "clean", "hops": 1, "passage_ids": [], "replacement_rules": [],
            "evidence_positions": evidence if texts else [], "confusing_fact_positions": [],
            "pool_until": ""}  # fmt: skip


def write(rows: list[dict[str, Any]], path: Path) -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=RECORD_SCHEMA), path)
    return path


def test_chunk_spans_are_computed_once_per_distinct_passage(passages: list[str]) -> None:
    chunker = Chunker(64)
    for texts in (passages[:5], passages[3:9], passages[:5]):
        context = record(0, texts)["context"]
        expected = []
        for head in re.finditer(r"### Passage \d+\n", context):
            end = context.find("\n\n### Passage", head.end())
            body = context[head.end() : end if end >= 0 else len(context)]
            expected += [(head.end() + s.char_start, head.end() + s.char_end)
                         for s in chunk_spans(body, 64)]  # fmt: skip
        assert chunker.spans(context) == expected
    assert chunker.stats() == {"asked": 16, "cache_hits": 7, "split": 9, "hit_rate": 0.4375}
    assert Chunker(64).spans("no header, one passage") == [(0, 22)]


def test_records_are_read_in_row_batches_in_file_order(tmp_path: Path, passages: list[str]) -> None:
    rows = [record(i, passages[i : i + 3]) for i in range(7)]
    path = write(rows, tmp_path / "events_mixup_2k.parquet")
    read = read_records(path, rows=3)
    assert isinstance(read, Iterator)
    assert list(read) == [EvalRecord.from_row(r) for r in rows]
    assert count_rows(path) == 7


def test_answers_stream_as_the_client_asks_and_keep_record_order(
    tmp_path: Path, passages: list[str]
) -> None:
    empty = {0, 17, 39}
    pulled = 0

    def records() -> Iterator[EvalRecord]:
        nonlocal pulled
        for i in range(40):
            pulled += 1
            texts = [] if i in empty else [f"On 5 March the levee number {i} broke.", passages[i]]
            yield EvalRecord.from_row(record(i, texts, f"When did levee number {i} break?"))

    settings = LLMSettings(cache=tmp_path / "llm.sqlite", concurrency=2)
    client = LLMClient.from_settings(settings, responders=answer_responders())
    rows = answer_all(client, records(), LVEvalBaselines(), load_tokenizer(None))
    first = next(rows)
    assert pulled <= 2 * settings.concurrency + 1  # not every record: those asked, and one empty
    every = [first, *rows]
    assert [r["qa_id"] for r in every] == [f"q{i:03d}" for i in range(40)]
    assert [r["status"] == "failed" for r in every] == [i in empty for i in range(40)]
    assert {r["prediction"] for r in every if r["status"] == "ok"} == {"5 March"}


def test_the_tables_do_not_depend_on_what_was_found_computed(
    tmp_path: Path, passages: list[str]
) -> None:
    rng = random.Random(4)
    rows = [record(i, rng.sample(passages, 6)) for i in range(12)]
    folder = tmp_path / "records"
    folder.mkdir()
    write(rows[:7], folder / "events_mixup_2k.parquet")
    write(rows[7:], folder / "events_mixup_4k.parquet")
    s = LVEvalBaselines(chunk_words=64, top_k=3, answer=False)
    tables = []
    for kept in (1, 1_000):  # nothing kept from a record to the next, and everything kept
        bags = Bags(kept)
        ranks = {"random": lambda q, t: random_scores(q, t, seed=1), "bm25": BM25(bags),
                 "tfidf": TFIDF(bags)}  # fmt: skip
        out = tmp_path / f"out-{kept}"
        out.mkdir()
        stats = StageStats("lveval_baselines")
        score_records(sorted(folder.glob("*.parquet")), ranks, None, None, s, out, stats,
                      Chunker(64, kept))  # fmt: skip
        tables.append(pq.read_table(out / "retrieval.parquet").to_pylist())
        assert stats.counts["records"] == 12
    assert tables[0] == tables[1] and len(tables[0]) == 36
    assert sum(r["found"] for r in tables[0] if r["retriever"] == "bm25") > 0
