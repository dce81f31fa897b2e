"""Benchmark ROUGE-L as benchsmith's scorers compute it (rouge-score's tokenizer and F-measure,
the longest common subsequence bit-parallel) against rouge-score's own ``RougeScorer``, in one
process, on the same pairs: the snapshot's article pages paired with each other, and synthetic
texts of growing length (WikiGenBench articles run to thousands of words).

Reported per length: seconds per pair for each, the ratio, and whether every score was equal.

    python bench/rouge_l.py                  # lengths 250, 1000, 3000 words
    python bench/rouge_l.py --words 8000     # one length
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from pathlib import Path

from rouge_score import rouge_scorer

from benchsmith_scoring.leval.metrics import rouge_l

ROOT = Path(__file__).resolve().parents[1]


def _pairs(words: int, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """``count`` pairs of ``words``-word texts drawn from the snapshot's vocabulary."""
    vocabulary = (ROOT / "snapshot" / "wiki" / "export.xml").read_text("utf-8").split()
    return [
        tuple(" ".join(rng.choice(vocabulary) for _ in range(words)) for _ in range(2))
        for _ in range(count)
    ]


def _timed(score, pairs: list[tuple[str, str]]) -> tuple[float, list[float]]:
    start = time.perf_counter()
    values = [score(prediction, reference) for prediction, reference in pairs]
    return (time.perf_counter() - start) / len(pairs), values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, nargs="*", default=[250, 1000, 3000])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--stem", action="store_true", help="Porter-stem as WikiGenBench does")
    args = parser.parse_args()
    theirs = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=args.stem)
    rng = random.Random(0)
    pages = (ROOT / "snapshot" / "wiki" / "export.xml").read_text("utf-8").split("<page>")[1:]
    runs = [("snapshot pages", list(itertools.pairwise(pages)))]
    runs += [(f"{n:,} words", _pairs(n, args.pairs, rng)) for n in args.words]
    print(f"{'pairs':>16} {'rouge-score s':>14} {'ours s':>10} {'ratio':>7}  equal")
    for name, pairs in runs:
        slow, expected = _timed(lambda p, r: theirs.score(r, p)["rougeL"].fmeasure, pairs)
        fast, got = _timed(lambda p, r: rouge_l(p, r, stem=args.stem), pairs)
        print(f"{name:>16} {slow:>14.4f} {fast:>10.4f} {slow / fast:>6.1f}x  {got == expected}")


if __name__ == "__main__":
    main()
