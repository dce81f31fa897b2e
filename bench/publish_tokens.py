"""Benchmark what the ``tokens`` column costs the publish stage at LV-Eval's longest level.

A synthetic LV-Eval level (``bench/lveval.py``'s seeded corpus, ``--items`` QA items in four
variants at ``--level``, 256k words by default) is built in memory, then, in one process:

- **publish without counts**: the stage's own work on that config's rows, the LV-Eval config's
  row transform (``pipelines.publish.rows``: rename, first answer, split) and its zstd Parquet
  shards (``pipelines.publish.shards.ShardWriter``);
- **the tokens column**: ``pipelines.publish.token_counts.token_column`` in each of
  ``--tokenizers``, with a cold memo, as the stage computes it;
- **direct**: the same requests counted by the tokenizer called directly (bpe-openai's
  ``encode_ordinary`` on parts of at most 500,000 characters cut before a passage header).

Reported: seconds of each, the counts' share of the stage's work on that config, and whether
every count equals the direct one.

    OMP_NUM_THREADS=1 RAYON_NUM_THREADS=1 PYTHONPATH=. python bench/publish_tokens.py
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from bench.lveval import synthetic
from bench.tokens import _parts
from benchsmith_scoring import tokens
from benchsmith_scoring.harness import lveval_prompt
from builders.lveval.build import records
from builders.lveval.contexts import level_words
from builders.lveval.records import RECORD_SCHEMA
from pipelines.publish.registry import DATASETS
from pipelines.publish.rows import Rows
from pipelines.publish.shards import ShardWriter
from pipelines.publish.token_counts import token_column


def level_table(items: int, level: str, seed: int) -> pa.Table:
    """Every item's four variant rows at ``level`` from the synthetic corpus."""
    words = level_words(level)
    corpus, prepared = synthetic(items, int(words * 1.3), seed)
    rows = [
        row for p in prepared for row in records(p, corpus, level, words, seed=seed, tolerance=0.05)
    ]
    return pa.Table.from_pylist(rows, schema=RECORD_SCHEMA)


def publish_rows(table: pa.Table, out: Path) -> float:
    """Seconds of the LV-Eval config's row transform and its Parquet shards."""
    spec = next(c for c in DATASETS["lveval"].configs if c.name.startswith("{stem}"))
    start = time.perf_counter()
    rows = Rows(spec, "clean", {}, None, False, None, out).transform(table)
    writer = ShardWriter(out, "test", rows.schema, 500 << 20, 64 << 20)
    writer.write(rows)
    writer.close()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--level", default="256k")
    parser.add_argument("--tokenizers", nargs="*", default=["cl100k_base", "o200k_base"])
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    table = level_table(args.items, args.level, args.seed)
    rows = table.num_rows
    spec = next(c for c in DATASETS["lveval"].configs if c.name.startswith("{stem}"))
    published = table.rename_columns(
        ["question" if n == "input" else n for n in table.column_names]
    )
    published = published.append_column(
        "answer", pa.array([a[0] for a in table["answers"].to_pylist()])
    )
    with tempfile.TemporaryDirectory() as tmp:
        stage_s = publish_rows(table, Path(tmp))
    megabytes = sum(len(c) for c in table["context"].to_pylist()) / 1e6
    print(f"{args.level}: {rows} rows, {megabytes:.1f} MB of context")
    print(f"publish without counts (transform + zstd shards): {stage_s:.2f} s")
    for spec_text in args.tokenizers:
        tokens._load.cache_clear()
        start = time.perf_counter()
        tokenizer = tokens.load(spec_text)
        load_s = time.perf_counter() - start
        start = time.perf_counter()
        column = token_column(published, spec, [tokenizer])
        ours_s = time.perf_counter() - start
        ours = column.field(0).to_pylist()
        start = time.perf_counter()
        direct = []
        for row in published.to_pylist():
            prompt = lveval_prompt(row)
            framed = tokenizer.count_prompt(prompt) - tokenizer.count(prompt)
            text = sum(len(tokenizer.encode(p)) for p in _parts(prompt))
            direct.append(framed + text + len(tokenizer.encode(row["answer"])))
        direct_s = time.perf_counter() - start
        print(
            f"{tokenizer.name:>12}: load {load_s:.2f} s, tokens column {ours_s:.2f} s "
            f"({ours_s / stage_s:.0%} of publish without counts), direct {direct_s:.2f} s, "
            f"{sum(ours) / ours_s:,.0f} tokens/s, equal {ours == direct}"
        )


if __name__ == "__main__":
    random.seed(0)
    main()
