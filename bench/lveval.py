"""Benchmark LV-Eval-style context building: time and peak memory per length level.

A seeded synthetic corpus (passages of 300 to 900 words of made-up English with made-up names)
holds one supporting passage per QA item with a sentence such as "The Norvale relief fund paid
out 4,173 grants." whose answer occurs nowhere else, a confusing fact (the same sentence with
another number) and a rule replacing the item's name by an invented one absent from the corpus.
Each level runs in a fresh spawned process: it rebuilds the corpus, sets Arrow up with one tiny
Parquet file, then streams every item's four variant rows from ``builders.lveval.build.records``
into zstd Parquet (``RECORD_SCHEMA``, the stage's writer, ``--batch`` rows per write; by default
as the stage, ``write_buffer_mb`` of context text). Reported per level: seconds, records/s,
words/s, Parquet size, peak RSS growth (``ru_maxrss`` minus its value before the level, so no
other level counts),
rows whose length is outside ``[level x (1 - tolerance), level]``, and growth from the first.

    PYTHONPATH=. python bench/lveval.py --items 100 --levels 16k 32k 64k 128k 256k
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import random
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from builders.lveval import cfi, kpr
from builders.lveval.build import Prepared, records
from builders.lveval.contexts import Corpus, level_words
from builders.lveval.records import RECORD_SCHEMA, Evidence, Passage, QAItem, Rule
from builders.lveval.settings import DEFAULT_LEVELS, LVEvalSettings
from pipelines.outputs import TableWriter

SYLLABLES = ("nor", "vale", "bren", "tor", "mis", "ald", "quen", "rho", "bar", "tel", "win",
             "dor", "sel", "ka", "ith", "mar", "gow", "pen", "lys", "har")  # fmt: skip
NOUNS = ("river", "bridge", "council", "harvest", "market", "ledger", "tower", "village",
         "treaty", "library", "road", "mill", "garrison", "festival", "charter")  # fmt: skip
ADJECTIVES = ("old", "quiet", "northern", "crowded", "narrow", "famous", "ruined", "busy",
              "distant", "wealthy", "humble", "stormy", "ancient", "modest")  # fmt: skip
VERBS = ("visited", "repaired", "described", "defended", "mapped", "praised", "taxed", "built")
COUNTS = ("two", "three", "five", "seven", "eleven", "twenty", "forty", "several", "many")
FILLER = (
    "{N} {v} the {a} {n} near {P}.",
    "In the {a} season, {N} and {M} {v} {c} {n}s along the {n2}.",
    "The {n} of {P} was {a} and {a2}, according to {N}.",
    "Few {n}s in {P} were as {a} as the {n2} that {N} {v}.",
    "{N} later wrote that the {n} had been {a} for {c} years.",
    "Travellers from {P} {v} the {n} and stayed until the {n2} closed.",
)
FACTS = (  # (sentence, question) with {X} the item's name and {k} the number
    ("The {X} relief fund paid out {k} grants.", "How many grants did the {X} fund pay out?"),
    ("The {X} archive held {k} letters.", "How many letters did the {X} archive hold?"),
    ("The {X} harbour handled {k} ships.", "How many ships did the {X} harbour handle?"),
    ("The {X} militia counted {k} members.", "How many members did the {X} militia count?"),
)


def name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def filler(rng: random.Random, people: list[str], places: list[str], words: int) -> list[str]:
    """Made-up sentences until about ``words`` words."""
    out: list[str] = []
    count = 0
    while count < words:
        sentence = rng.choice(FILLER).format(
            N=rng.choice(people), M=rng.choice(people), P=rng.choice(places), v=rng.choice(VERBS),
            a=rng.choice(ADJECTIVES), a2=rng.choice(ADJECTIVES), n=rng.choice(NOUNS),
            n2=rng.choice(NOUNS), c=rng.choice(COUNTS),
        )  # fmt: skip
        out.append(sentence)
        count += len(sentence.split())
    return out


def synthetic(items: int, corpus_words: int, seed: int) -> tuple[Corpus, list[Prepared]]:
    """The corpus (support passages first, then distractors) and the prepared items."""
    rng = random.Random(seed)
    people, places = [name(rng) for _ in range(300)], [name(rng) for _ in range(100)]
    own: list[str] = []
    while len(own) < items:  # item names: unique, not among the corpus's other names
        candidate = name(rng) + rng.choice(("ford", "mere", "holt", "wick"))
        if candidate not in own and candidate not in people and candidate not in places:
            own.append(candidate)
    numbers = rng.sample(range(1000, 10000), 2 * items)  # answers, then confusing numbers
    passages: list[Passage] = []
    pending: list[tuple[int, str, str, str, str]] = []
    for k in range(items):
        sentence, question = FACTS[k % len(FACTS)]
        answer, other = f"{numbers[k]:,}", f"{numbers[items + k]:,}"
        body = filler(rng, people, places, rng.randint(300, 900) - 8)
        body.insert(rng.randrange(len(body) + 1), sentence.format(X=own[k], k=answer))
        text = " ".join(body)
        passages.append(Passage(f"syn-{k:05d}", "synthetic", f"{own[k]} records", text))
        pending.append((k, sentence.format(X=own[k], k=answer), question, answer, other))
    total = sum(len(p.text.split()) for p in passages)
    while total < corpus_words:
        text = " ".join(filler(rng, people, places, rng.randint(300, 900)))
        pid = f"syn-{len(passages):05d}"
        passages.append(
            Passage(pid, "synthetic", f"{rng.choice(places)} {rng.choice(NOUNS)}", text)
        )
        total += len(text.split())
    corpus = Corpus(passages)
    words, _ = kpr.vocabulary(p.text for p in passages)
    prepared = []
    for k, sentence, question, answer, other in pending:
        start = passages[k].text.index(sentence)
        evidence = Evidence(passages[k].passage_id, start, start + len(sentence), sentence)
        item = QAItem(f"qa-{k:04d}", "synthetic_mixup", "en", "synthetic", 1,
                      question.format(X=own[k]), (answer,), answer, (evidence,))  # fmt: skip
        repl = kpr.invent(own[k], seed, words)
        fact = sentence.replace(answer, other)
        rules = (Rule(own[k], repl, item.qa_id),)
        assert cfi.check(fact, item) is None and kpr.problems(item, rules, words, [fact]) is None
        words.add(repl.lower())
        prepared.append(Prepared(item, (fact,), rules))
    return corpus, prepared


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(args: argparse.Namespace, label: str) -> dict[str, Any]:
    """Build one level in this (fresh) process; time, rows, words, violations and RSS growth."""
    corpus, prepared = synthetic(args.items, args.corpus_words, args.seed)
    settings = LVEvalSettings()
    size, floor = level_words(label), level_words(label) * (1 - settings.tolerance)
    rows = words = bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        before = max_rss_mb()
        with TableWriter(Path(tmp) / "warm-up.parquet", RECORD_SCHEMA) as out:  # Arrow's set-up
            out.write({"input": "", "context": "", "qa_id": "", "level": "", "variant": ""})
        base = max_rss_mb()
        path = Path(tmp) / f"synthetic_mixup_{label}.parquet"
        start = time.perf_counter()
        batch = args.batch or LVEvalSettings().rows_per_write(size)
        with TableWriter(path, RECORD_SCHEMA, batch) as out:
            for prep in prepared:
                for row in records(prep, corpus, label, size, seed=args.seed,
                                   tolerance=settings.tolerance):  # fmt: skip
                    out.write(row)
                    rows += 1
                    words += row["length"]
                    bad += not floor <= row["length"] <= size
        seconds = time.perf_counter() - start
        file_mb = path.stat().st_size / 2**20
    peak, warm = max_rss_mb() - base, base - before
    return dict(label=label, size=size, rows=rows, words=words, bad=bad, seconds=seconds,
                file_mb=file_mb, base=base, warm=warm, peak=peak)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--levels", nargs="+", default=list(DEFAULT_LEVELS))
    parser.add_argument("--corpus-words", type=int, default=400_000)
    parser.add_argument("--seed", type=int, default=LVEvalSettings().seed)
    parser.add_argument("--batch", type=int, default=0, help="rows per write (0: as the stage)")
    args = parser.parse_args()
    largest = max(level_words(label) for label in args.levels)
    if args.corpus_words <= largest:
        parser.error(f"--corpus-words must be above the largest level ({largest:,} words)")
    corpus, prepared = synthetic(args.items, args.corpus_words, args.seed)
    for item in prepared:  # each answer is in its supporting passage only
        assert len(corpus.distractors(item.item)) == len(corpus) - 1, item.item.qa_id
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPU cores, "
        f"python {platform.python_version()}; {len(prepared)} items x 4 variants per level; "
        f"corpus {sum(corpus.words):,} words in {len(corpus)} passages; seed {args.seed}"
    )
    print(
        "memory: peak RSS growth = ru_maxrss of a fresh spawned process per level, minus its "
        "ru_maxrss once the corpus is built and one tiny Parquet file written (Arrow's one-time "
        "set-up); rows stream into zstd Parquet (RECORD_SCHEMA, "
        f"{args.batch or 'as the stage:'} rows per buffered write; the stage buffers "
        f"{LVEvalSettings().write_buffer_mb} MB of context text)\n"
    )
    spawn = multiprocessing.get_context("spawn")
    results = []
    for label in args.levels:
        with spawn.Pool(1) as pool:
            results.append(pool.apply(measure, (args, label)))
    first = results[0]
    print(
        "| level | words | records | seconds | records/s | words/s | Parquet MB "
        "| peak RSS growth MB | length violations | level / first | time / first "
        "| memory / first |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['label']} | {r['size']:,} | {r['rows']:,} | {r['seconds']:.1f} "
            f"| {r['rows'] / r['seconds']:,.1f} | {r['words'] / r['seconds']:,.0f} "
            f"| {r['file_mb']:,.1f} | {r['peak']:,.0f} | {r['bad']} "
            f"| {r['size'] / first['size']:.0f}x | {r['seconds'] / first['seconds']:.2f}x "
            f"| {r['peak'] / max(first['peak'], 1):.2f}x |"
        )
    print(
        f"\nbaseline max RSS per process (corpus built, Arrow set up): {first['base']:,.0f} MB, "
        f"of which Arrow's set-up {first['warm']:,.0f} MB"
    )


if __name__ == "__main__":
    main()
