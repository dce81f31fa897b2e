"""Benchmark the lveval_baselines stage on long contexts: the per-record path it had before
(every retriever re-chunking and re-tokenizing the whole context, BM25 indexing every record,
the whole context tokenized for the middle cut, the template answerer splitting the whole cut
context into sentences) against the current one, in one process, on the same records.

Records: the first ``--records`` of the snapshot's largest level (``data/lveval/records``;
``dvc repro lveval`` makes it) grown to LV-Eval's levels. Each keeps its own passages (its
evidence positions move with them) among passages of every snapshot record file, drawn in a
seeded order that an item's four variants share, until the level's words. The snapshot has
about 920 distinct passages (238k words), so a 256k context holds most of them and records
share many passages: the new path's memos are also timed fresh for every record (nothing
reused across records, the worst case).

Both paths read one embedding cache, filled first (its time per embedded chunk is reported
apart), so the comparison leaves the encoder out. CPU time is ``time.process_time`` with
``OMP_NUM_THREADS=1``. Each path's results are checked equal (evidence found per retriever, the
truncated context, the answers); each part counts its fastest of ``--repeat`` runs, every run
from empty memos. Then the whole stage runs on each level in a fresh spawned process
(streaming, answering with the template backend through a fresh LLM cache): CPU-s per 1,000
context words, peak RSS (and its growth once the encoder is loaded) and the memos' hit rates.
Last, the last level's records repeated ``--copies`` times are read whole (as the stage did)
and in row batches (as it does), each in a fresh process: peak RSS growth (VmHWM). Files are written
in row groups of the lveval stage's size (``lveval.write_buffer_mb`` of context text).

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python bench/lveval_baselines.py \\
        --levels 16k 32k 64k 128k 256k --records 8
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import platform
import random
import re
import resource
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from builders.lveval import kpr
from builders.lveval.contexts import level_words
from builders.lveval.records import EvalRecord
from builders.lveval.responders import (
    _DATE,
    _NUMBER,
    _PASSAGE_HEADER,
    _PLACE,
    _line_sentences,
    answer,
)
from builders.lveval.settings import LVEvalSettings
from builders.text import sentences, tokens
from pipelines.embed.cache import text_key
from pipelines.embed.chunk import chunk_spans
from pipelines.embed.models import load_tokenizer
from pipelines.evaluation.lveval import (
    Chunker,
    evidence_found,
    middle_truncate,
    middle_truncate_whole,
)
from pipelines.evaluation.lveval_scoring import read_records
from pipelines.retrieval.bm25 import BM25
from pipelines.retrieval.memo import Memo
from pipelines.retrieval.rankers import QUERIES_KEPT, VECTORS_KEPT, CachedDense, random_scores
from pipelines.retrieval.terms import Bags
from pipelines.settings import load_params

ROOT = Path(__file__).resolve().parents[1]
HEADER = re.compile(r"(?:^|\n\n)### Passage \d+\n")
RETRIEVERS = ("random", "bm25", "dense")


# --- records at LV-Eval's levels ----------------------------------------------------------


def passages_of(context: str) -> list[tuple[int, str]]:
    """``(start, text)`` of every passage of a rendered context."""
    heads = list(HEADER.finditer(context))
    ends = [h.start() for h in heads[1:]] + [len(context)]
    return [(h.end(), context[h.end() : end]) for h, end in zip(heads, ends, strict=True)]


def render(texts: Sequence[str]) -> tuple[str, list[int]]:
    """LV-Eval's context text of ``texts`` and where each passage starts."""
    parts, starts, at = [], [], 0
    for n, text in enumerate(texts, 1):
        head = f"{'' if n == 1 else chr(10) * 2}### Passage {n}\n"
        starts.append(at + len(head))
        parts += [head, text]
        at += len(head) + len(text)
    return "".join(parts), starts


def grown(
    rows: list[dict[str, Any]], pool: list[str], label: str, seed: int
) -> Iterator[dict[str, Any]]:
    """Every row's record at level ``label``: its passages among ``pool``'s until the level."""
    words = level_words(label)
    for row in rows:
        own = passages_of(row["context"])
        rng = random.Random(f"{seed}:{row['qa_id']}:{label}")  # shared by the item's variants
        order = rng.sample(pool, len(pool))
        filler, total = [], sum(len(t.split()) + 3 for _, t in own)
        while total < 0.97 * words:
            filler.append(order[len(filler) % len(order)])
            total += len(filler[-1].split()) + 3
        slots = set(rng.sample(range(len(filler) + len(own)), len(own)))
        texts, moved, rest, mine = [], [], iter(filler), iter(own)
        for i in range(len(filler) + len(own)):
            if i in slots:
                moved.append(len(texts))
            texts.append(next(mine)[1] if i in slots else next(rest))
        context, starts = render(texts)
        positions = []
        for e in row["evidence_positions"]:
            n = e["passage"] - 1
            start = starts[moved[n]] + e["start"] - own[n][0]
            end = start + e["end"] - e["start"]
            assert context[start:end] == e["text"], row["qa_id"]
            depth = round(start / len(context), 4)
            positions.append({**e, "passage": moved[n] + 1, "start": start, "end": end,
                              "depth": depth})  # fmt: skip
        yield {**row, "context": context, "level": label, "level_words": words,
               "length": len(context.split()), "evidence_positions": positions}  # fmt: skip


def write_levels(source: Path, out: Path, labels: Sequence[str], n: int, seed: int) -> None:
    """One Parquet file per level under ``out``: the first ``n`` records of ``source`` grown
    with the passages of every record file beside it."""
    table = pq.read_table(source)
    rows = table.to_pylist()[:n]
    pool = sorted(
        {text for f in source.parent.glob("*.parquet")
         for context in pq.read_table(f, columns=["context"]).column(0).to_pylist()
         for _, text in passages_of(context)}
    )  # fmt: skip
    for label in labels:
        grown_rows = list(grown(rows, pool, label, seed))
        name = f"{source.stem.rsplit('_', 1)[0]}_{label}.parquet"
        group = LVEvalSettings().rows_per_write(level_words(label))
        pq.write_table(pa.Table.from_pylist(grown_rows, schema=table.schema), out / name,
                       row_group_size=group)  # fmt: skip


# --- the path before: a frozen copy --------------------------------------------------------


def old_chunks(context: str, size: int) -> list[tuple[int, int]]:
    """Chunk spans, every passage split again."""
    heads = list(HEADER.finditer(context))
    bounds = [(m.end(), heads[k + 1].start() if k + 1 < len(heads) else len(context))
              for k, m in enumerate(heads)] or [(0, len(context))]  # fmt: skip
    out = []
    for start, end in bounds:
        out += [(start + s.char_start, start + s.char_end)
                for s in chunk_spans(context[start:end], size)]  # fmt: skip
    return out


def old_bm25(query: str, texts: Sequence[str]) -> list[float]:
    """bm25s over every text of the record, tokenized and indexed afresh."""
    import bm25s

    if not texts:
        return []
    corpus = bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)
    terms = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
    if not terms or not any(corpus):
        return [0.0] * len(texts)
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    return [float(s) for s in index.get_scores(terms)]


class OldDense:
    """Vectors in a dict by text (never emptied), then the embedding cache; the query embedded
    for every record."""

    def __init__(self, dense: CachedDense):
        self.scorer, self.fingerprint, self.cache = dense.scorer, dense.fingerprint, dense.cache
        self.vectors: dict[str, Any] = {}

    def __call__(self, query: str, texts: list[str]) -> list[float]:
        todo = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if todo and self.cache is not None:
            keys = {t: text_key(self.fingerprint, t) for t in todo}
            found = self.cache.get_many(list(keys.values()))
            self.vectors.update({t: found[k] for t, k in keys.items() if k in found})
            todo = [t for t in todo if t not in self.vectors]
        assert not todo, "the embedding cache was filled first"
        q = self.scorer.embed([query], kind="query")[0]
        return [float(self.vectors[t] @ q) for t in texts]


def old_answer(v: dict[str, str]) -> str:
    """The template answerer splitting and tokenizing the whole (truncated) context."""
    question = set(tokens(v["question"])) - kpr.NOT_NAMES
    best, score = "", 0
    context = _PASSAGE_HEADER.sub("\n", v["context"])
    for start, end in sentences(context):
        overlap = len(question & set(tokens(context[start:end])))
        if overlap > score:
            best, score = context[start:end], overlap
    asks = v["question"].lower()
    pattern = _DATE if asks.startswith("when") else _PLACE if asks.startswith("where") else None
    if asks.startswith("how"):
        pattern = _NUMBER
    match = pattern.search(best) if pattern else None
    if match:
        return match[1] if match.groups() else match[0]
    return best.strip()


def old_recall(record: EvalRecord, ranks: dict[str, Callable], top_k: int, size: int) -> list:
    out = []
    for rank in ranks.values():
        spans = old_chunks(record.context, size)
        scores = rank(record.input, [record.context[a:b] for a, b in spans])
        out.append(evidence_found(record, spans, scores, top_k))
    return out


def new_recall(
    record: EvalRecord, ranks: dict[str, Callable], top_k: int, chunker: Chunker
) -> list:
    spans = chunker.spans(record.context)
    texts = [record.context[a:b] for a, b in spans]
    return [
        evidence_found(record, spans, rank(record.input, texts), top_k) for rank in ranks.values()
    ]


# --- measuring ----------------------------------------------------------------------------


def cpu(run: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    result = run()
    return time.process_time() - start, result


def fill_cache(records: list[EvalRecord], dense: CachedDense, size: int) -> tuple[int, float]:
    """Embed every distinct chunk of ``records`` into the cache: (chunks embedded, CPU s)."""
    chunker = Chunker(size)
    texts = {r.context[a:b]: None for r in records for a, b in chunker.spans(r.context)}
    seconds, _ = cpu(lambda: dense.vectors(list(texts)))
    return dense.embedded, seconds


def compare(records: list[EvalRecord], args: argparse.Namespace, dense: CachedDense) -> dict:
    """CPU seconds of each path on ``records`` (one level), results checked equal."""
    tokenizer = load_tokenizer(None)
    seed, size, k, budget = 2026, args.chunk_words, args.top_k, args.context_tokens
    old = {"random": partial(random_scores, seed=seed), "bm25": old_bm25, "dense": OldDense(dense)}
    new = {"random": partial(random_scores, seed=seed), "bm25": BM25(Bags()), "dense": dense}
    dense.memo, dense.queries = Memo(VECTORS_KEPT), Memo(QUERIES_KEPT)
    chunker = Chunker(size)
    t: dict[str, float] = {}
    t["old_retrieval"], found_old = cpu(lambda: [old_recall(r, old, k, size) for r in records])
    t["new_retrieval"], found_new = cpu(lambda: [new_recall(r, new, k, chunker) for r in records])

    def alone(record: EvalRecord) -> list:
        new["bm25"] = BM25(Bags())
        dense.memo, dense.queries = Memo(VECTORS_KEPT), Memo(QUERIES_KEPT)
        return new_recall(record, new, k, Chunker(size))

    t["alone_retrieval"], found_alone = cpu(lambda: [alone(r) for r in records])
    assert found_old == found_new == found_alone, "evidence found differs"
    t["old_truncate"], cut_old = cpu(
        lambda: [middle_truncate_whole(r.context, budget, tokenizer) for r in records]
    )
    t["new_truncate"], cut_new = cpu(
        lambda: [middle_truncate(r.context, budget, tokenizer) for r in records]
    )
    assert cut_old == cut_new, "truncated contexts differ"
    asks = [{"question": r.input, "context": c} for r, c in zip(records, cut_new, strict=True)]
    answer(asks[0])  # Punkt loads once
    _line_sentences.cache_clear()
    t["old_answer"], said_old = cpu(lambda: [old_answer(v) for v in asks])
    t["new_answer"], said_new = cpu(lambda: [answer(v) for v in asks])

    def answer_alone(v: dict[str, str]) -> str:
        _line_sentences.cache_clear()
        return answer(v)

    t["alone_answer"], said_alone = cpu(lambda: [answer_alone(v) for v in asks])
    assert said_old == said_new == said_alone, "answers differ"
    t["alone_truncate"] = t["new_truncate"]  # the cut keeps nothing from a record to the next
    return t


def peak_mb() -> float:
    """This process's peak RSS (VmHWM; ``ru_maxrss`` of a spawned process starts from its
    parent's)."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) / 1024  # type: ignore[index]


def read_peak(path: Path, whole: bool) -> float:
    """Peak RSS growth (MB) of reading every record of ``path``, in this (fresh) process: the
    whole file at once as the stage did, or in row batches as it does."""
    base = peak_mb()
    if whole:
        table = pq.read_table(path, columns=list(EvalRecord.COLUMNS))
        rows = [EvalRecord.from_row(r) for r in table.to_pylist()]
        words = sum(len(r.context) for r in rows)
    else:
        words = sum(len(r.context) for r in read_records(path))
    assert words
    return peak_mb() - base


def stage_level(folder: Path, cache: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The whole stage on one level's file, in this (fresh) process: CPU s, peak RSS growth, and
    the memos' figures from its stats.json."""
    import json

    from pipelines.retrieval.dense import shared_scorer
    from pipelines.stages.lveval_baselines import run_lveval_baselines

    params = load_params(ROOT / "params.yaml")
    retrieval = params.resolved_retrieval()
    shared_scorer(retrieval.dense_model).embed(["warm up"])
    load_tokenizer(None)(["warm up"])
    answer({"question": "warm up?", "context": "Warm up."})
    settings = {"retrievers": list(RETRIEVERS), "context_tokens": args.context_tokens,
                "top_k": args.top_k, "chunk_words": args.chunk_words}  # fmt: skip
    s = params.lveval_baselines.model_copy(update=settings)
    with tempfile.TemporaryDirectory() as tmp:
        llm = params.llm.model_copy(update={"cache": Path(tmp) / "llm.sqlite"})
        base, before = resource.getrusage(resource.RUSAGE_SELF), peak_mb()
        start = time.perf_counter()
        stats = run_lveval_baselines(s, records=folder, out=Path(tmp) / "out", llm=llm,
                                     retrieval=retrieval, embed_cache=cache)  # fmt: skip
        wall = time.perf_counter() - start
        end = resource.getrusage(resource.RUSAGE_SELF)
        summary = json.loads((Path(tmp) / "out" / "stats.json").read_text())
    used = (end.ru_utime - base.ru_utime) + (end.ru_stime - base.ru_stime)
    memos = {k: summary.get(k, {}) for k in ("passages", "dense_chunks", "term_chunks")}
    rss = peak_mb()
    grew = rss - before
    return {"cpu": used, "wall": wall, "rss": rss, "grew": grew,
            "records": stats.counts["records"], **memos}  # fmt: skip


def print_parts(label: str, words: int, t: dict[str, float]) -> None:
    """One level's rows: each part's CPU seconds, then all three in ms per 1,000 words."""
    parts = ("retrieval", "truncate", "answer")
    for part in parts:
        old, new, alone = (t[f"{way}_{part}"] for way in ("old", "new", "alone"))
        print(f"| {label} | {words:,} | {part} | {old:.2f} | {new:.2f} | {alone:.2f} "
              f"| {old / new:.1f}x | {old / alone:.1f}x |")  # fmt: skip
    old, new, alone = (1e6 * sum(t[f"{way}_{p}"] for p in parts) / words
                       for way in ("old", "new", "alone"))  # fmt: skip
    print(f"| {label} | {words:,} | **all, ms per 1k words** | {old:.2f} | {new:.2f} "
          f"| {alone:.2f} | {old / new:.1f}x | {old / alone:.1f}x |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", nargs="+", default=["16k", "32k", "64k", "128k", "256k"])
    parser.add_argument("--records", type=int, default=8, help="records per level")
    parser.add_argument("--source", type=Path, default=None, help="records file to grow")
    parser.add_argument("--context-tokens", type=int, default=31500, help="LV-Eval's default")
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--chunk-words", type=int, default=256)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--copies", type=int, nargs="+", default=[8, 32],
                        help="of the last level's records, for reading")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=3, help="runs per level; the fastest counts")
    args = parser.parse_args()
    source = args.source or max(
        (ROOT / "data" / "lveval" / "records").glob("*.parquet"),
        key=lambda p: level_words(p.stem.rsplit("_", 1)[1]),
    )
    params = load_params(ROOT / "params.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        folder, cache = Path(tmp) / "records", Path(tmp) / "vectors.sqlite"
        folder.mkdir()
        write_levels(source, folder, args.levels, args.records, args.seed)
        files = {label: next(folder.glob(f"*_{label}.parquet")) for label in args.levels}
        levels = {
            label: [EvalRecord.from_row(r) for r in pq.read_table(f).to_pylist()]
            for label, f in files.items()
        }
        dense = CachedDense(params.resolved_retrieval().dense_model, cache)
        every = [r for records in levels.values() for r in records]
        embedded, embed_s = fill_cache(every, dense, args.chunk_words)
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} CPU cores, python "
            f"{platform.python_version()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; "
            f"{args.records} records per level grown from {source.name}; context_tokens "
            f"{args.context_tokens}, top_k {args.top_k}, chunk_words {args.chunk_words}\n"
            f"embedding cache filled first: {embedded:,} distinct chunks in {embed_s:.1f} CPU s "
            f"({1000 * embed_s / max(embedded, 1):.0f} ms per chunk)\n"
        )
        print("| level | context words | part | old CPU s | new CPU s | new, fresh memos CPU s "
              "| old / new | old / new, fresh memos |")  # fmt: skip
        print("|---|---:|---|---:|---:|---:|---:|---:|")
        for label, records in levels.items():
            runs = [compare(records, args, dense) for _ in range(args.repeat)]
            fastest = {part: min(run[part] for run in runs) for part in runs[0]}
            print_parts(label, sum(len(r.context.split()) for r in records), fastest)
        print(
            "\nthe whole stage, one fresh process per level (template answers, fresh LLM cache):\n"
        )
        print("| level | records | CPU s | CPU s / 1k words | wall s | peak RSS MB | growth MB "
              "| passages hit rate | dense chunks hit rate | bags hit rate |")  # fmt: skip
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        spawn = multiprocessing.get_context("spawn")
        for label, path in files.items():
            words = sum(len(r.context.split()) for r in levels[label])
            one = Path(tmp) / label
            one.mkdir()
            os.link(path, one / path.name)
            with spawn.Pool(1) as pool:
                r = pool.apply(stage_level, (one, cache, args))
            print(
                f"| {label} | {r['records']} | {r['cpu']:.1f} | {1000 * r['cpu'] / words:.4f} "
                f"| {r['wall']:.1f} | {r['rss']:.0f} | {r['grew']:.0f} "
                f"| {r['passages'].get('hit_rate')} "
                f"| {r['dense_chunks'].get('hit_rate')} | {r['term_chunks'].get('hit_rate')} |"
            )
        table = pq.read_table(files[args.levels[-1]])
        group = LVEvalSettings().rows_per_write(level_words(args.levels[-1]))
        print(f"\nreading the {args.levels[-1]} records repeated, one fresh process each:\n")
        print("| records | Parquet MB | whole file (before): peak RSS growth MB "
              "| row batches (now): peak RSS growth MB |\n|---:|---:|---:|---:|")  # fmt: skip
        for copies in args.copies:
            many = Path(tmp) / f"many-{copies}.parquet"
            pq.write_table(pa.concat_tables([table] * copies), many, row_group_size=group)
            grew = []
            for whole in (True, False):
                with spawn.Pool(1) as pool:
                    grew.append(pool.apply(read_peak, (many, whole)))
            print(f"| {table.num_rows * copies} | {many.stat().st_size / 2**20:.0f} "
                  f"| {grew[0]:.0f} | {grew[1]:.0f} |")  # fmt: skip
            many.unlink()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    print(f"\nsource {source.name} sha256 {digest}")


if __name__ == "__main__":
    main()
