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

import pyarrow.parquet as pq

from builders.drops import DROP_SCHEMA, DROPS
from builders.summhay.official import to_official
from builders.summhay.records import HAYSTACK_SCHEMA, ORDER_SCHEMA, Topic
from builders.summhay.responders import filler_sentences, responders
from builders.summhay.settings import SummhaySettings
from builders.summhay.variants import orders
from builders.text import sentences
from builders.wikigen.entries import event_id
from pipelines.llm import LLMClient, LLMSettings
from pipelines.outputs import TableWriter
from pipelines.progress import progress_iter
from pipelines.sources.wiki.articles import read_articles
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats
from pipelines.synthesis.summhay import synthesize

HAYSTACKS = "haystacks.parquet"
ORDERS = "orders.parquet"
OFFICIAL = "official"


def topics(settings: SummhaySettings, articles_path: Path | None) -> list[Topic]:
    """Topics from params, then up to ``topics_from_events`` selected events as news topics."""
    out = [
        Topic(t.topic_id, t.domain, t.topic, tuple(t.participants), "params")
        for t in settings.topics
    ]
    if settings.topics_from_events and articles_path is not None:
        for article in read_articles(articles_path)[: settings.topics_from_events]:
            first = sentences(article.summary)[:1]
            lead = article.summary[slice(*first[0])].rstrip(".") if first else ""
            text = f"{lead}." if lead else article.title
            out.append(
                Topic(
                    f"event-{article.page_id}",
                    "news",
                    text,
                    tuple(settings.outlets),
                    f"event:{event_id(article)}",
                )
            )
    return out


def filler(documents_path: Path | None, topic_list: list[Topic]) -> dict[str, tuple[str, ...]]:
    """Sentences of the web stage's usable documents for template documents: per event topic
    (its own documents), and the shared pool under ``""``."""
    if documents_path is None or not documents_path.is_file():
        return {}
    columns = ["doc_id", "event_id", "status", "text"]
    rows = sorted(
        pq.read_table(documents_path, columns=columns).to_pylist(), key=lambda r: r["doc_id"]
    )
    rows = [r for r in rows if r["status"] == "ok"]
    pools = {"": filler_sentences([r["text"] for r in rows])}
    for topic in topic_list:
        if topic.source.startswith("event:"):
            event = topic.source.removeprefix("event:")
            pools[topic.topic_id] = filler_sentences(
                [r["text"] for r in rows if r["event_id"] == event]
            )
    return pools


def run_summhay(
    settings: SummhaySettings, *, articles: Path, documents: Path, out: Path, llm: LLMSettings
) -> StageStats:
    """Synthesize one haystack per topic and write the outputs atomically; ``documents`` (the web
    stage's) only lend sentences to template documents and may be missing."""
    with stage_run("summhay", out) as run:
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
