"""Row views a config can publish instead of its source rows (``ConfigSpec.view``).

Each view maps one batch of source rows to the rows to publish; the registry names it, so a flat
config of a nested table is an entry there, not new export code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchsmith_scoring.summhay import document_numbers, numbered_documents
from benchsmith_scoring.wikigen import reference_article
from pipelines.errors import MissingInputError, PublishError
from pipelines.publish.registry import CHUNKS, ENTRIES

View = Callable[[pa.Table], pa.Table]
DataView = Callable[[pa.Table, Path], pa.Table]
"""A view that also reads other stage outputs (``ConfigSpec.view_reads``) under the data
folder it is given."""

INSIGHT = pa.struct(
    [
        ("insight_id", pa.string()),
        ("text", pa.string()),
        ("gold_document_ids", pa.list_(pa.string())),
        ("gold_document_numbers", pa.list_(pa.int32())),
    ]
)
SUBTOPIC_SCHEMA = pa.schema(
    [
        ("topic_id", pa.string()),
        ("domain", pa.string()),
        ("topic", pa.string()),
        ("source", pa.string()),
        ("subtopic_id", pa.string()),
        ("subtopic", pa.string()),
        ("description", pa.string()),
        ("query", pa.string()),
        ("insights", pa.list_(INSIGHT)),
        ("reference", pa.string()),
        ("document_ids", pa.list_(pa.string())),
        ("context", pa.string()),
    ]
)


def haystack_context(documents: list[dict[str, Any]]) -> str:
    """The haystack as one text: ``Document N:`` and its text, in haystack order, as the
    summarizer's prompt shows them (N is the number citations use)."""
    return numbered_documents((n, d["text"]) for n, d in enumerate(documents, 1))


def bullets(lines: Iterable[str]) -> str:
    """Lines as a Markdown bullet list."""
    return "\n".join(f"- {line}" for line in lines)


def subtopic_rows(haystack: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per subtopic of a haystack row."""
    documents = haystack["documents"] or []
    ids = [d["document_id"] for d in documents]
    number = document_numbers(ids)
    context = haystack_context(documents)
    return [
        {
            "topic_id": haystack["topic_id"],
            "domain": haystack["domain"],
            "topic": haystack["topic"],
            "source": haystack["source"],
            "subtopic_id": subtopic["subtopic_id"],
            "subtopic": subtopic["name"],
            "description": subtopic["description"],
            "query": subtopic["query"],
            "insights": [
                {
                    "insight_id": i["insight_id"],
                    "text": i["text"],
                    "gold_document_ids": i["gold_document_ids"],
                    "gold_document_numbers": [number[d] for d in i["gold_document_ids"]],
                }
                for i in subtopic["insights"] or []
            ],
            "reference": bullets(i["text"] for i in subtopic["insights"] or []),
            "document_ids": ids,
            "context": context,
        }
        for subtopic in haystack["subtopics"] or []
    ]


def summhay_subtopics(table: pa.Table) -> pa.Table:
    """SummHay haystacks flattened to one row per topic and subtopic."""
    rows = [row for haystack in table.to_pylist() for row in subtopic_rows(haystack)]
    return pa.Table.from_pylist(rows, schema=SUBTOPIC_SCHEMA)


def outline_text(sections: list[dict[str, Any]]) -> str:
    """The article's section headings in Markdown, one a line (``## Impact``)."""
    return "\n".join(f"{'#' * s['level']} {s['title']}" for s in sections)


def article_text(summary: str | None, sections: list[dict[str, Any]]) -> str:
    """The reference article in Markdown: the lead, then each heading and its text."""
    parts = [summary or ""]
    for section in sections:
        heading = f"{'#' * section['level']} {section['title']}"
        parts.append(f"{heading}\n\n{section['text']}" if section["text"] else heading)
    return "\n\n".join(p for p in parts if p)


def wikigen_entries(table: pa.Table) -> pa.Table:
    """WikiGenBench entries with two strings for prompting and scoring: ``outline_text`` (the
    headings to write) and ``article`` (the reference article)."""
    rows = table.select(["summary", "sections"]).to_pylist()
    sections = [r["sections"] or [] for r in rows]
    at = table.column_names.index("outline") + 1
    table = table.add_column(
        at, "outline_text", pa.array([outline_text(s) for s in sections], pa.string())
    )
    articles = [article_text(r["summary"], s) for r, s in zip(rows, sections, strict=True)]
    at = table.column_names.index("sections") + 1
    return table.add_column(at, "article", pa.array(articles, pa.string()))


RR_DOCUMENT = pa.struct(
    [
        ("n", pa.int32()),
        ("chunk_id", pa.string()),
        ("document_id", pa.string()),
        ("text", pa.string()),
    ]
)
RR_CONTEXT_SCHEMA = pa.schema(
    [
        ("event_id", pa.string()),
        ("split", pa.string()),
        ("retriever", pa.string()),
        ("title", pa.string()),
        ("documents", pa.list_(RR_DOCUMENT)),
        ("reference", pa.string()),
        ("context_tokens", pa.int32()),
        ("reference_recall", pa.float64()),
    ]
)


def _read(data: Path, source: str, columns: list[str], key: str, wanted: set[str]) -> pa.Table:
    """The rows of ``data/source`` whose ``key`` is in ``wanted``."""
    path = data / source
    if not path.is_file():
        raise MissingInputError(f"missing {path} (read by the rr_contexts view)", path)
    return pq.read_table(path, columns=columns, filters=[(key, "in", sorted(wanted))])


def wikigen_rr_contexts(table: pa.Table, data: Path) -> pa.Table:
    """The ``wikigen_baselines`` stage's RR contexts (``retrieval.parquet``: per entry and
    reranker, the chunk ids its title's context read, in order) as the RR prompt shows them:
    the title, and ``documents`` numbered from 1 (``n``) with each chunk's text (the chunk
    stage's); with ``reference``, the text the toolkit scores ROUGE-L against (the lead and
    every section's text, :func:`benchsmith_scoring.wikigen.reference_article`)."""
    rows = table.to_pylist()
    if not rows:
        return RR_CONTEXT_SCHEMA.empty_table()
    ids = {c for r in rows for c in r["chunk_ids"] or []}
    columns = ["chunk_id", "document_id", "text"]
    chunks = {c["chunk_id"]: c for c in _read(data, CHUNKS, columns, "chunk_id", ids).to_pylist()}
    columns = ["event_id", "title", "summary", "sections"]
    events = {r["event_id"] for r in rows}
    entries = _read(data, ENTRIES, columns, "event_id", events).to_pylist()
    entries_by_id = {e["event_id"]: e for e in entries}
    out = []
    for row in rows:
        entry = entries_by_id.get(row["event_id"])
        missing = [c for c in row["chunk_ids"] or [] if c not in chunks]
        if entry is None or missing:
            what = f"chunk {missing[0]!r} ({data / CHUNKS})" if missing else "its entry"
            raise PublishError(
                f"the RR context of {row['event_id']!r} ({row['retriever']}) names {what}, "
                "which is not there; rerun 'dvc repro wikigen_baselines'"
            )
        sections = [s["text"] for s in entry["sections"] or []]
        documents = [{"n": n, **chunks[c]} for n, c in enumerate(row["chunk_ids"] or [], 1)]
        out.append(
            {
                **{k: row[k] for k in ("event_id", "split", "retriever")},
                "title": entry["title"],
                "documents": documents,
                "reference": reference_article(entry["summary"], sections),
                **{k: row[k] for k in ("context_tokens", "reference_recall")},
            }
        )
    return pa.Table.from_pylist(out, schema=RR_CONTEXT_SCHEMA)


VIEWS: dict[str, View] = {
    "summhay_subtopics": summhay_subtopics,
    "wikigen_entries": wikigen_entries,
}
DATA_VIEWS: dict[str, DataView] = {"wikigen_rr_contexts": wikigen_rr_contexts}
"""Views that read other stage outputs too, given the data folder."""


@dataclass(frozen=True)
class Text:
    """A text of a published row that its ``tokens`` column counts alone: how to get it from the
    row (None when the row has none), and what it is, for the card."""

    of: Callable[[Mapping[str, Any]], str | None]
    covers: str


def _haystack(row: Mapping[str, Any]) -> str | None:
    documents = row.get("documents")
    return None if documents is None else haystack_context(documents)


TEXTS: dict[str, Text] = {
    "haystack_context": Text(
        _haystack,
        "the haystack as one text, its documents labelled `Document N:` in haystack order, "
        "exactly as the `subtopics` config's `context` joins them",
    ),
    "document_text": Text(
        lambda row: row.get("text") or None,
        "the document's extracted `text`; null where it is empty or absent (a document that "
        "could not be fetched or used, or documents published as URLs only)",
    ),
}
"""Texts a config's ``tokens`` column can count (``ConfigSpec.tokens``), by name."""
