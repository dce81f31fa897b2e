"""What SummHay synthesis starts from: the topics (from params and from selected events) and the
web documents' sentences that template documents are filled with."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from builders.summhay.records import Topic
from builders.summhay.responders import filler_sentences
from builders.summhay.settings import SummhaySettings
from builders.text import sentences
from builders.wikigen.entries import event_id
from pipelines.sources.wiki.articles import read_articles


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
