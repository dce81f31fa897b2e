"""The ``lveval`` stage: LV-Eval-style sets built from the selected events (and any configured
Hugging Face QA dataset), at every length level, in four variants.

Writes ``qa.parquet`` (the verified QA items), ``records/<dataset>_<level>.parquet`` (every item
at that level as clean, cfi, kpr and cfi_kpr records), ``leval/<dataset>_<level>.jsonl`` (the
same in L-Eval's layout), ``rules.jsonl`` (the proposed replacement rules, in the reviewed-rules
format), ``drops.parquet`` (every item left out, with step and reason) and ``stats.json``; with
``official_layout`` also ``official/<variant>/<name>_<level>.jsonl`` (LV-Eval's own layout, read
back from the records in batches; not a DVC output).
Records are streamed level by level and written in batches of at most ``write_buffer_mb`` of
context text, so memory does not grow with the number of items. Each item's distractors, the
names its confusing fact may swap in and the vocabulary its replacement names are checked
against come from its pool: the events created by its first release (``builders/lveval/pools``),
so a refresh that adds events leaves earlier items' records byte-identical.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pyarrow.parquet as pq

from builders.drops import DROP_SCHEMA, DROPS
from builders.leval.export import leval_line
from builders.lveval import kpr
from builders.lveval.build import records
from builders.lveval.contexts import level_words
from builders.lveval.official import write_official
from builders.lveval.passages import corpus as entry_corpus
from builders.lveval.pools import Pools
from builders.lveval.records import QA_SCHEMA, RECORD_SCHEMA, Passage
from builders.lveval.responders import responders
from builders.lveval.settings import LVEvalSettings
from builders.releases import Release, day_of
from pipelines.errors import MissingInputError, ParamsError
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.sources.hub.qa_sets import hub_items
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats
from pipelines.synthesis.lveval import Built, event_questions, prepare

QA = "qa.parquet"
RULES = "rules.jsonl"
RECORDS = "records"
LEVAL = "leval"
OFFICIAL = "official"


def read_rules(path: Path) -> list[kpr.Rule]:
    """Rules from a JSONL file in the reviewed-rules format; errors name the file and line."""
    return kpr.parse_rules(path.read_text(encoding="utf-8").splitlines(), str(path))


def reviewed_rules(settings: LVEvalSettings, root: Path) -> list[kpr.Rule]:
    """The reviewed rules file, if set; errors name the setting and the line. The file is
    checked when params.yaml is loaded; a relative path (settings built in code) is taken from
    ``root``."""
    if settings.kpr.rules_file is None:
        return []
    path = root / settings.kpr.rules_file
    try:
        return read_rules(path)
    except OSError as exc:
        raise ParamsError(f"[lveval -> kpr -> rules_file] {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ParamsError(f"[lveval -> kpr -> rules_file] {exc}") from None


def run_lveval(
    settings: LVEvalSettings,
    *,
    entries: Path,
    out: Path,
    llm: LLMSettings,
    root: Path = Path("."),
    releases: Sequence[Release] = (),
) -> StageStats:
    """Build every item at every level and variant, and write the outputs atomically. Each
    item's distractors come from the events created by its first release of ``releases``
    (every passage when none are given)."""
    with stage_run("lveval", out) as run:
        built = Built()
        passages: list[Passage] = []
        events = []
        if settings.events.enabled:
            if not entries.is_file():
                raise MissingInputError(f"missing {entries} (the wikigen entries)", entries)
            events = sorted(pq.read_table(entries).to_pylist(), key=lambda e: e["event_id"])
            passages += entry_corpus(events, settings.passage_words)
        for n, source in enumerate(settings.hub_sources):
            items, own, drops = hub_items(source, f"[lveval -> hub_sources -> {n}]")
            built.items += items
            passages += own
            built.drops += drops
        days = {e["event_id"]: day_of(e["created_at"]) for e in events if e.get("created_at")}
        pools = Pools(passages, days, releases)
        client = LLMClient.from_settings(llm, responders=responders(settings.seed))
        if events:
            event_questions(client, events, settings, built)
        sizes = {label: level_words(label) for label in settings.levels}
        prepare(client, pools, settings, reviewed_rules(settings, root), max(sizes.values()),
                built)  # fmt: skip
        # which pool every item drew from: its first release's last creation day
        run.extra["pools"] = {
            str(pool.until): {"items": n, "passages": len(pool.passages)}
            for pool, n in Counter(pools.of(p.item) for p in built.prepared).items()
        }

        lengths: dict[str, list[int]] = {}
        run.client = client
        stats, scratch = run.stats, run.scratch
        with TableWriter(scratch / QA, QA_SCHEMA) as qa_out:
            for prepared in built.prepared:
                qa_out.write(prepared.item.to_row())
        with TableWriter(scratch / DROPS, DROP_SCHEMA) as drops_out:
            for drop in built.drops:
                drops_out.write(drop.to_row())
                stats.drop(f"{drop.step}_{drop.reason}")
        with (scratch / RULES).open("w", encoding="utf-8") as rules_out:
            for qa_id, proposed in built.proposed.items():
                for rule in proposed:
                    line = {"orig": rule.orig, "repl": rule.repl, "scope": qa_id}
                    rules_out.write(json.dumps(line, ensure_ascii=False) + "\n")
        datasets = sorted({p.item.dataset for p in built.prepared})
        stats.update("qa_items", len(built.prepared))
        stats.counts.update(Counter(f"qa_items_{p.item.hops}_hop" for p in built.prepared))
        (scratch / RECORDS).mkdir()
        (scratch / LEVAL).mkdir()
        for label, size in sizes.items():
            for dataset in datasets:
                mine = [p for p in built.prepared if p.item.dataset == dataset]
                name = f"{dataset}_{label}"
                with (
                    TableWriter(
                        scratch / RECORDS / f"{name}.parquet",
                        RECORD_SCHEMA,
                        settings.rows_per_write(size),
                    ) as records_out,  # fmt: skip
                    (scratch / LEVAL / f"{name}.jsonl").open("w", encoding="utf-8") as leval,
                ):
                    for prepared in progress_iter(mine, f"lveval: {name}"):
                        pool = pools.of(prepared.item)
                        for row in records(
                            prepared,
                            pool.corpus,
                            label,
                            size,
                            seed=settings.seed,
                            tolerance=settings.tolerance,
                            copies=settings.cfi.copies,
                            pool_until="" if pool.until is None else pool.until.isoformat(),
                        ):
                            records_out.write(row)
                            leval.write(json.dumps(leval_line(row), ensure_ascii=False) + "\n")
                            stats.update(f"records_{label}")
                            lengths.setdefault(label, []).append(row["length"])
        if settings.official_layout:
            try:
                write_official(scratch / RECORDS, scratch / OFFICIAL, settings.official_name)
            except ValueError as exc:
                raise ParamsError(f"[lveval -> official_name] {exc}") from None
        levels = {
            label: {"words": sizes[label], "min_length": min(v), "max_length": max(v)}
            for label, v in lengths.items()
        }
        run.extra["levels"] = levels
    if not settings.official_layout:
        shutil.rmtree(out / OFFICIAL, ignore_errors=True)  # left by an earlier run with it on
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    c = stats.counts
    levels = ", ".join(k.removeprefix("records_") for k in c if k.startswith("records_"))
    return (
        f"lveval: {c['qa_items']} QA items x 4 variants at {levels}; "
        f"{sum(stats.dropped.values())} items dropped -> {out}/"
    )
