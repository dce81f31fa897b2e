"""The ``lveval`` stage: LV-Eval-style sets built from the selected events (and any configured
Hugging Face QA dataset), at every length level, in four variants.

Writes ``qa.parquet`` (the verified QA items), ``records/<dataset>_<level>.parquet`` (every
item at that level as clean, cfi, kpr and cfi_kpr records; with ``length_unit: tokens`` sized in
tokens of ``lveval.tokenizer``, with three more columns), ``leval/<dataset>_<level>.jsonl`` (the
same in L-Eval's layout), ``rules.jsonl`` (the proposed replacement rules, in the reviewed-rules
format), ``drops.parquet`` (every item left out, and every level an item cannot fill, with step
and reason) and ``stats.json``; with ``official_layout`` also
``official/<variant>/<name>_<level>.jsonl`` (LV-Eval's own layout, read back from the records in
batches; not a DVC output).
Records are streamed level by level and written in batches of at most ``write_buffer_mb`` of
context text, so memory does not grow with the number of items. Each item's distractors, the
names its confusing fact may swap in and the vocabulary its replacement names are checked
against come from its pool: the events created by its first release (``builders/lveval/pools``),
so a refresh that adds events leaves earlier items' records byte-identical.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from builders.lveval.contexts import level_tokens, level_words
from builders.lveval.responders import responders
from builders.lveval.settings import LVEvalSettings
from builders.lveval.token_sizing import TokenCounts
from builders.releases import Release
from pipelines.llm import LLMClient, LLMSettings
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats
from pipelines.synthesis.lveval import event_questions, prepare
from pipelines.synthesis.lveval_inputs import pool_use, read_inputs
from pipelines.synthesis.lveval_outputs import (
    OFFICIAL,
    write_drops,
    write_items,
    write_levels,
    write_official_layout,
)
from pipelines.synthesis.lveval_rules import reviewed_rules
from pipelines.synthesis.lveval_settings import stage_tokenizer


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
    with stage_run("lveval", out, models=True) as run:
        events, pools, built = read_inputs(settings, entries, releases)
        client = LLMClient.from_settings(llm, responders=responders(settings.seed))
        if events:
            event_questions(client, events, settings, built)
        tokenizer = stage_tokenizer(settings, root)
        tokens = None if tokenizer is None else TokenCounts(tokenizer)
        size = level_words if tokens is None else level_tokens
        sizes = {label: size(label) for label in settings.levels}
        reviewed = reviewed_rules(settings, root)
        prepare(client, pools, settings, reviewed, max(sizes.values()), built, tokens)
        run.extra["pools"] = pool_use(pools, built)
        run.client = client
        write_items(run.scratch, built, run.stats)
        run.extra["levels"] = write_levels(
            run.scratch, built, pools, settings, sizes, run.stats, tokens
        )
        write_drops(run.scratch, built, run.stats)
        if settings.official_layout:
            write_official_layout(run.scratch, settings)
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
