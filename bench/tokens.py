"""Benchmark token counting as benchsmith counts it (``benchsmith_scoring.tokens``: a line at a
time, each line's count remembered) against the same tokenizer called directly, in one process.

Two workloads, both LV-Eval-shaped (``### Passage N`` headers over passages of about 800 words,
lines of 20 to 60 words drawn from the snapshot's vocabulary):

- ``cold``: one context per level, every passage new, so nothing is remembered: raw speed;
- ``levels x variants``: every level (16k to 256k words) in four variants that share their
  passages (two insert a sentence, as CFI does), as the lveval builder and the publish stage
  meet them: a passage recurs across levels and variants.

"Direct" is ``tokenizers``' ``Tokenizer.encode`` of the whole text for a ``tokenizer.json``, and
bpe-openai's ``encode_ordinary`` for an OpenAI encoding: of the whole text up to 500,000
characters, and of parts cut before a ``### Passage`` header past that (bpe-openai refuses
a million characters or 200,000 tokens; its split pattern ends a piece there). Reported: tokens
per second of each, the ratio, and whether every count was equal.

    OMP_NUM_THREADS=1 RAYON_NUM_THREADS=1 python bench/tokens.py
    python bench/tokens.py --tokenizers cl100k_base smollm2=path/to/tokenizer.json --levels 256
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from pathlib import Path

from benchsmith_scoring import tokens

ROOT = Path(__file__).resolve().parents[1]
PASSAGE_WORDS = 800
VARIANTS = 4


def _passages(words: int, rng: random.Random, vocabulary: list[str]) -> list[str]:
    """Passages of about :data:`PASSAGE_WORDS` words, as lines of 20 to 60 words."""
    out = []
    for _ in range(max(1, words // PASSAGE_WORDS)):
        lines, left = [], PASSAGE_WORDS
        while left > 0:
            n = min(left, rng.randint(20, 60))
            lines.append(" ".join(rng.choice(vocabulary) for _ in range(n)) + ".")
            left -= n
        out.append("\n".join(lines))
    return out


def _context(passages: list[str], fact: str | None = None) -> str:
    parts = [f"### Passage {n}\n{p}" for n, p in enumerate(passages, 1)]
    if fact:
        parts.insert(len(parts) // 2, f"### Passage 0\n{fact}")
    return "\n\n".join(parts)


def _workloads(levels: list[int], rng: random.Random) -> dict[str, list[str]]:
    vocabulary = (ROOT / "snapshot" / "wiki" / "export.xml").read_text("utf-8").split()
    top = _passages(max(levels) * 1000, rng, vocabulary)
    cold = [_context(_passages(k * 1000, rng, vocabulary)) for k in levels]
    shared = []
    for k in levels:
        chosen = rng.sample(top, max(1, k * 1000 // PASSAGE_WORDS))
        for v in range(VARIANTS):
            shared.append(_context(chosen, "A confusing fact." if v % 2 else None))
    return {"cold": cold, "levels x variants": shared}


def _parts(text: str, most: int = 500_000) -> list[str]:
    """``text`` cut before ``### Passage`` headers into parts of at most ``most`` characters."""
    parts, start = [], 0
    while len(text) - start > most:
        cut = text.rindex("\n\n### Passage", start, start + most) + 2
        parts.append(text[start:cut])
        start = cut
    return [*parts, text[start:]]


def _direct(tokenizer: tokens.Tokenizer) -> Callable[[str], int]:
    """The tokenizer called directly, on the whole text (in parts where bpe-openai refuses)."""
    if tokenizer.framing == "openai-chat":
        return lambda text: sum(len(tokenizer.encode(part)) for part in _parts(text))
    return lambda text: len(tokenizer.encode(text))


def _timed(count: Callable[[str], int], texts: list[str]) -> tuple[float, list[int]]:
    start = time.perf_counter()
    counts = [count(t) for t in texts]
    return time.perf_counter() - start, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizers", nargs="*", default=["cl100k_base", "o200k_base"])
    parser.add_argument("--levels", type=int, nargs="*", default=[16, 32, 64, 128, 256])
    args = parser.parse_args()
    work = _workloads(args.levels, random.Random(0))
    print(f"levels {args.levels} (thousands of words)")
    print(f"{'tokenizer':>22} {'workload':>18} {'tokens':>11} {'direct tok/s':>13} "
          f"{'ours tok/s':>12} {'ratio':>7}  equal")  # fmt: skip
    for spec in args.tokenizers:
        for name, texts in work.items():
            tokens._load.cache_clear()  # a cold memo for every workload
            tokenizer = tokens.load(spec)
            slow, expected = _timed(_direct(tokenizer), texts)
            fast, got = _timed(tokenizer.count, texts)
            total = sum(expected)
            print(
                f"{tokenizer.name:>22} {name:>18} {total:>11,} {total / slow:>13,.0f} "
                f"{total / fast:>12,.0f} {slow / fast:>6.1f}x  {got == expected}"
            )


if __name__ == "__main__":
    main()
