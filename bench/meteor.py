"""Benchmark METEOR as WikiGenBench reports it (the METEOR 1.5 jar through one ``-stdio``
process, :class:`pipelines.evaluation.meteor.Meteor`): the jar's start, then seconds per article
for hypotheses and references of growing length (runs of the snapshot's wiki export text; the
paper's RR articles are about 500 words, its references and PRR articles run to thousands).

    python bench/meteor.py                       # 250, 500, 1000 and 2000 words, 3 pairs each
    python bench/meteor.py --words 4000 --pairs 1
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from pipelines.evaluation.meteor import Meteor, describe

ROOT = Path(__file__).resolve().parents[1]


def _pairs(words: int, count: int, rng: random.Random) -> list[tuple[str, list[str]]]:
    """``count`` (hypothesis, [reference]) pairs, each a run of ``words`` words of the export."""
    text = (ROOT / "snapshot" / "wiki" / "export.xml").read_text("utf-8").split()

    def run() -> str:
        start = rng.randrange(len(text) - words)
        return " ".join(text[start : start + words])

    return [(run(), [run()]) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, nargs="*", default=[250, 500, 1000, 2000])
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(0)
    start = time.perf_counter()
    with Meteor() as meteor:
        print(f"{describe()}: started in {time.perf_counter() - start:.1f} s")
        print("| words | s per article | articles/s |\n|---:|---:|---:|")
        for words in args.words:
            pairs = _pairs(words, args.pairs, rng)
            start = time.perf_counter()
            result = meteor.score(pairs)
            per = (time.perf_counter() - start) / len(pairs)
            assert result.failed == 0, [a.error for a in result.articles]
            print(f"| {words:,} | {per:.2f} | {1 / per:.2f} |")


if __name__ == "__main__":
    main()
