"""The ``summhay`` stage: verified SummHay haystacks, their position variants and public layout.

Writes ``haystacks.parquet`` (one verified haystack per topic), ``orders.parquet`` (document
order per subtopic and position), ``drops.parquet`` (every item left out, with step and reason),
``official/<topic_id>.json`` (SummHay's public layout) and ``stats.json`` with the LLM accounting.
A rerun after a crash asks the model only what the response cache does not hold.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from builders.drops import DROP_SCHEMA, DROPS
from builders.summhay.official import to_official
from builders.summhay.records import HAYSTACK_SCHEMA, ORDER_SCHEMA
from builders.summhay.responders import responders
from builders.summhay.settings import SummhaySettings
from builders.summhay.variants import orders
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats
from pipelines.synthesis.summhay import synthesize
from pipelines.synthesis.summhay_topics import filler, topics

HAYSTACKS = "haystacks.parquet"
ORDERS = "orders.parquet"
OFFICIAL = "official"


def run_summhay(
    settings: SummhaySettings, *, articles: Path, documents: Path, out: Path, llm: LLMSettings
) -> StageStats:
    """Synthesize one haystack per topic and write the outputs atomically; ``documents`` (the web
    stage's) only lend sentences to template documents and may be missing."""
    with stage_run("summhay", out, models=True) as run:
        topic_list = topics(settings, articles)
        client = LLMClient.from_settings(llm, responders=responders(filler(documents, topic_list)))
        run.client = client
        stats = run.stats
        stats.counts.update({"topics": 0, "haystacks": 0})
        scratch = run.scratch
        (scratch / OFFICIAL).mkdir()
        with (
            TableWriter(scratch / HAYSTACKS, HAYSTACK_SCHEMA, batch_rows=8) as haystacks,
            TableWriter(scratch / ORDERS, ORDER_SCHEMA) as order_rows,
            TableWriter(scratch / DROPS, DROP_SCHEMA) as drops,
        ):
            for topic in progress_iter(topic_list, "summhay: topics"):
                stats.update("topics")
                result = synthesize(client, topic, settings)
                for drop in result.drops:
                    drops.write(drop.to_row())
                    stats.drop(f"{drop.kind}_{drop.reason}")
                haystack = result.haystack
                if haystack is None:
                    continue
                stats.update("haystacks")
                stats.update("subtopics", len(haystack.subtopics))
                stats.update("insights", len(haystack.insights))
                stats.update("documents", len(haystack.documents))
                stats.update("document_words", sum(d.word_count for d in haystack.documents))
                haystacks.write(haystack.to_row())
                rng = random.Random(f"{settings.seed}:{topic.topic_id}:order")
                for subtopic_id, position, ids in orders(haystack, rng):
                    order_rows.write(
                        {
                            "topic_id": topic.topic_id,
                            "subtopic_id": subtopic_id,
                            "position": position,
                            "document_ids": ids,
                        }
                    )
                official = scratch / OFFICIAL / f"topic_{topic.topic_id}.json"
                official.write_text(
                    json.dumps(to_official(haystack), indent=1, ensure_ascii=False) + "\n", "utf-8"
                )
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    c = stats.counts
    return (
        f"summhay: {c['haystacks']} of {c['topics']} haystacks, {c['subtopics']} subtopics, "
        f"{c['insights']} insights, {c['documents']} documents, "
        f"{sum(stats.dropped.values())} items dropped -> {out}/"
    )
