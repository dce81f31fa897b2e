"""Benchmark how the lveval stage grows with the world: CPU seconds per event at two sizes, with
its hot functions timed old against new in one process.

The inputs are the wikigen entries of two worlds grown K-fold from the snapshot (``benchsmith
snapshot scale``, then the wiki, web and wikigen stages; ``bench/scale.py`` does both):

    python bench/scale.py --factors 10 30 --work /tmp/scale --stages wiki web wikigen
    PYTHONPATH=. python bench/lveval_scale.py /tmp/scale/k10/data/wikigen/entries.parquet \\
        /tmp/scale/k30/data/wikigen/entries.parquet --levels 16k 32k 64k 128k

1. Hot functions, in this process, per world: the events' QA items (the template backend's
   questions), then for every item at every level the plan of its context (``assemble``) and
   the check that the pool can fill it (``fits``), each twice: as the stage does it (the pool's
   mention index and the bulk equivalent of ``random.shuffle``) and as it did before (every
   passage scanned for every item, the whole distractor list shuffled by ``random.shuffle``).
   Both must give the same plans; the CPU seconds of each, per event.
2. The stage, in a fresh spawned process per world (``run_lveval``, outputs in a temporary
   folder): CPU seconds of the process, all threads, and peak RSS.

Every figure is CPU seconds per event, with its growth from the first world to the second
(the events grow K-fold, so linear work stays at 1.00x). One thread (``OMP_NUM_THREADS=1``).
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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]

import pyarrow.parquet as pq  # noqa: E402

from builders.lveval.contexts import (  # noqa: E402
    HEADER_WORDS,
    AssemblyError,
    Block,
    Corpus,
    assemble,
    level_words,
)
from builders.lveval.passages import corpus as entry_corpus  # noqa: E402
from builders.lveval.records import Passage, QAItem  # noqa: E402
from builders.lveval.responders import responders  # noqa: E402
from builders.lveval.settings import LVEvalSettings  # noqa: E402
from builders.lveval.text import normal_form  # noqa: E402
from pipelines.llm import LLMClient, LLMSettings  # noqa: E402
from pipelines.settings import load_params  # noqa: E402
from pipelines.stages.lveval import run_lveval  # noqa: E402
from pipelines.synthesis.lveval import Built, event_questions, fits  # noqa: E402


class ScanCorpus(Corpus):
    """The pool as the stage used it before: every passage scanned for every item's answers,
    the whole distractor list shuffled by ``random.shuffle``."""

    def __init__(self, passages: Sequence[Passage]):
        super().__init__(passages)
        self.normal = [normal_form(p.text, p.language) for p in self.passages]

    def distractors(self, item: QAItem) -> list[int]:
        support = set(item.supporting_ids)
        needles = [normal_form(a, item.language) for a in item.answers]
        needles = [n for n in needles if n.strip()]
        return [
            i
            for i, p in enumerate(self.passages)
            if p.passage_id not in support and not any(n in self.normal[i] for n in needles)
        ]

    def distractor_words(self, item: QAItem) -> int:
        return sum(self.words[i] + HEADER_WORDS for i in self.distractors(item))

    def shuffled(self, item: QAItem, rng: random.Random) -> Iterator[int]:
        order = self.distractors(item)
        rng.shuffle(order)
        return iter(order)


def cpu() -> float:
    """CPU seconds of this process so far, every thread."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    """This process's peak RSS: ``VmHWM`` (``ru_maxrss`` of a spawned process starts at its
    parent's, which holds part 1's worlds)."""
    status = Path("/proc/self/status")
    if status.is_file():
        line = next(x for x in status.read_text().splitlines() if x.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def settings_for(args: argparse.Namespace) -> tuple[LVEvalSettings, LLMSettings]:
    """The project's lveval and llm settings with the benchmark's levels and questions."""
    params = load_params(ROOT / "params.yaml")
    events = params.lveval.events.model_copy(
        update={"questions_per_event": args.questions, "multi_hop_per_event": args.multi_hop}
    )
    update = {"levels": args.levels, "events": events, "official_layout": args.official}
    return params.lveval.model_copy(update=update), params.llm


def items_of(entries: list[dict[str, Any]], settings: LVEvalSettings, llm: LLMSettings) -> Built:
    """The events' verified QA items, from the template backend (nothing cached)."""
    with tempfile.TemporaryDirectory() as tmp:
        cache = llm.model_copy(update={"cache": Path(tmp) / "llm.sqlite", "cache_template": False})
        client = LLMClient.from_settings(cache, responders=responders(settings.seed))
        built = Built()
        event_questions(client, entries, settings, built)
    return built


def plans(
    items: list[QAItem], corpus: Corpus, settings: LVEvalSettings
) -> tuple[float, list[list[Block] | str]]:
    """CPU seconds of ``fits`` and ``assemble`` for every item at every level, and the plans
    (an error's message where the pool cannot fill a level)."""
    sizes = [level_words(label) for label in settings.levels]
    out: list[list[Block] | str] = []
    start = cpu()
    for item in items:
        out.append(str(fits(item, corpus, max(sizes), settings.tolerance)))
        for label, words in zip(settings.levels, sizes, strict=True):
            rng = random.Random(f"{settings.seed}:{item.qa_id}:{label}")
            try:
                out.append(assemble(item, corpus, words, rng, tolerance=settings.tolerance))
            except AssemblyError as exc:
                out.append(str(exc))
    return cpu() - start, out


def hot(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Part 1 for one world: items, then old and new plans, timed and compared."""
    settings, llm = settings_for(args)
    entries = sorted(pq.read_table(path).to_pylist(), key=lambda e: e["event_id"])
    passages = entry_corpus(entries, settings.passage_words)
    items = items_of(entries, settings, llm).items
    start = cpu()
    new_corpus = Corpus(passages)
    index_s = cpu() - start
    new_s, new = plans(items, new_corpus, settings)
    old_s, old = plans(items, ScanCorpus(passages), settings)
    if new != old:
        raise SystemExit(f"{path}: the new plans differ from the old ones")
    return {"events": len(entries), "passages": len(passages), "items": len(items),
            "index_s": index_s, "new_s": new_s, "old_s": old_s}  # fmt: skip


def stage(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Part 2 for one world (in a fresh process): the whole stage's CPU seconds and peak RSS."""
    settings, llm = settings_for(args)
    events = pq.ParquetFile(path).metadata.num_rows
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        llm = llm.model_copy(update={"cache": Path(tmp) / "llm.sqlite", "cache_template": False})
        start, wall = cpu(), time.perf_counter()
        stats = run_lveval(settings, entries=path, out=Path(tmp) / "lveval", llm=llm)
        seconds, wall = cpu() - start, time.perf_counter() - wall
    peak = peak_rss_mb()
    return {"events": events, "items": stats.counts["qa_items"], "cpu_s": seconds,
            "wall_s": wall, "peak_mb": peak}  # fmt: skip


def growth(a: dict[str, Any], b: dict[str, Any], key: str) -> str:
    """How ``key`` per event grew from world ``a`` to world ``b``."""
    return f"{(b[key] / b['events']) / (a[key] / a['events']):.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("entries", type=Path, nargs=2, help="wikigen entries of two worlds")
    parser.add_argument("--levels", nargs="+", default=["16k", "32k", "64k", "128k"])
    parser.add_argument("--questions", type=int, default=1, help="questions per event")
    parser.add_argument("--multi-hop", type=int, default=0, help="multi-hop questions per event")
    parser.add_argument("--official", action="store_true", help="also LV-Eval's own layout")
    parser.add_argument("--skip-hot", action="store_true", help="only the whole stage")
    parser.add_argument("--tmp", type=Path, default=None, help="where the stage writes")
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPU cores, python "
        f"{platform.python_version()}; levels {' '.join(args.levels)}, {args.questions} "
        f"question(s) and {args.multi_hop} multi-hop per event; CPU-s per event\n"
    )
    if not args.skip_hot:
        a, b = (hot(path, args) for path in args.entries)
        print("| world | events | passages | items | index | fits + assemble, new "
              "| fits + assemble, old | old / new |")  # fmt: skip
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for path, r in ((args.entries[0], a), (args.entries[1], b)):
            e = r["events"]
            print(f"| {path.parent.parent.parent.name} | {e:,} | {r['passages']:,} | "
                  f"{r['items']:,} | {r['index_s'] / e:.4f} | {r['new_s'] / e:.4f} | "
                  f"{r['old_s'] / e:.4f} | {r['old_s'] / r['new_s']:.1f}x |")  # fmt: skip
        print(f"| growth per event | | | | {growth(a, b, 'index_s')} | {growth(a, b, 'new_s')} "
              f"| {growth(a, b, 'old_s')} | |\n")  # fmt: skip
    spawn = multiprocessing.get_context("spawn")
    results = []
    for path in args.entries:
        with spawn.Pool(1) as pool:
            results.append(pool.apply(stage, (path, args)))
    print("| world | events | items | stage CPU-s | CPU-s per event | wall s | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for path, r in zip(args.entries, results, strict=True):
        print(f"| {path.parent.parent.parent.name} | {r['events']:,} | {r['items']:,} | "
              f"{r['cpu_s']:.1f} | {r['cpu_s'] / r['events']:.3f} | {r['wall_s']:.1f} | "
              f"{r['peak_mb']:,.0f} |")  # fmt: skip
    print(f"\nstage CPU per event, growth: {growth(results[0], results[1], 'cpu_s')}")


if __name__ == "__main__":
    main()
