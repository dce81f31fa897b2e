"""Benchmark the sentence splitter against pysbd, syntok and untrained Punkt, in one process.

Texts are the summaries and section bodies of every page of a MediaWiki XML dump (default: the
snapshot's), read by the project's dump reader. Each splitter cuts every text; a sentence boundary
is the offset where a sentence starts (after the first). Reported per reference: seconds, sentences,
time relative to ours, and how many of our boundaries it shares (agreement both ways), then a few
boundaries where the two disagree, for a reader to judge.

The references are downloaded from the package index into ``.cache/wheels`` the first time
(pure-Python wheels, imported from there, never installed):

    python bench/sentences.py
    python bench/sentences.py --dump path/to/pages-articles.xml.bz2 --show 10
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from collections.abc import Callable
from pathlib import Path

from bench.wheels import importable
from builders.text import sentences
from pipelines.sources.wiki.dump import read_dump

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "snapshot" / "wiki" / "export.xml"
REFERENCES = {"pysbd": "pysbd==0.3.4", "syntok": "syntok==1.4.4"}

Splitter = Callable[[str], list[int]]


def starts_of(text: str, pieces: list[str]) -> list[int]:
    """Where each of ``pieces`` (in order) starts in ``text``, for splitters without offsets."""
    out, at = [], 0
    for piece in (p.strip() for p in pieces):
        found = text.find(piece, at) if piece else -1
        if found >= 0:
            out.append(found)
            at = found + len(piece)
    return out


def splitters() -> dict[str, Splitter]:
    """Ours first, then each reference, as text -> sentence start offsets."""
    for requirement in REFERENCES.values():
        importable(requirement)
    import pysbd
    import syntok.segmenter as syntok
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    segmenter = pysbd.Segmenter(language="en", clean=False)
    punkt = PunktSentenceTokenizer()

    def syntok_starts(text: str) -> list[int]:
        return [s[0].offset for p in syntok.analyze(text) for s in p if s]

    return {
        "ours (builders.text.sentences)": lambda t: [s for s, _ in sentences(t)],
        "pysbd 0.3.4": lambda t: starts_of(t, segmenter.segment(t)),
        "syntok 1.4.4": syntok_starts,
        "Punkt, untrained (nltk)": lambda t: [s for s, _ in punkt.span_tokenize(t)],
    }


def texts(dump: Path) -> list[str]:
    """Every summary and section body of every page of ``dump``."""
    out = []
    for article in read_dump(dump, skip_sections=[]):
        out += [article.summary, *(s.text for s in article.sections)]
    return [t for t in out if t.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path, default=SNAPSHOT, help="MediaWiki XML dump")
    parser.add_argument("--show", type=int, default=4, help="disagreements shown per reference")
    args = parser.parse_args()
    corpus = texts(args.dump)
    chars = sum(map(len, corpus))
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}"
    )
    print(
        f"texts: {len(corpus):,} summaries and sections of {args.dump.name}, {chars:,} characters"
    )
    found: dict[str, list[set[int]]] = {}
    seconds: dict[str, float] = {}
    for name, split in splitters().items():
        start = time.perf_counter()
        found[name] = [set(split(t)[1:]) for t in corpus]
        seconds[name] = time.perf_counter() - start
    ours = next(iter(found))
    print("\n| splitter | seconds | sentences | time / ours | shares ours | ours shares |")
    print("|---|---:|---:|---:|---:|---:|")
    rng = random.Random(0)
    shown: list[str] = []
    for name, bounds in found.items():
        theirs = sum(map(len, bounds))
        both = sum(len(a & b) for a, b in zip(found[ours], bounds, strict=True))
        mine = sum(map(len, found[ours]))
        print(
            f"| {name} | {seconds[name]:.3f} | {theirs + len(corpus):,} | "
            f"{seconds[name] / seconds[ours]:.1f}x | {both / max(theirs, 1):.1%} | "
            f"{both / max(mine, 1):.1%} |"
        )
        if name == ours:
            continue
        diffs = [
            (side, text, at)
            for text, a, b in zip(corpus, found[ours], bounds, strict=True)
            for side, at in [
                *(("ours only", x) for x in a - b),
                *(("theirs only", x) for x in b - a),
            ]
        ]
        for side, text, at in rng.sample(diffs, min(args.show, len(diffs))):
            shown.append(
                f"- {name}, {side}: `{text[max(0, at - 45) : at]!r} | {text[at : at + 30]!r}`"
            )
    print("\nBoundaries where a reference and ours disagree (a sample):")
    print("\n".join(shown))


if __name__ == "__main__":
    main()
