"""The items of a built release, as the review page shows them: each reviewed field with its value
and the evidence behind it, read from the export's published rows (``data/publish/<dataset>/``).

LV-Eval: a QA item (``qa``) with its answers and evidence passages, and the confusing facts and
replacement rules its records carry; SummHay: a subtopic (``subtopics``) with its query and each
insight with the haystack documents that carry it; WikiGenBench: an entry (``entries``) with its
lead, outline and documents (titles, URLs, text excerpts).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from builders.validation import LEVELS
from pipelines.errors import MissingInputError, ReviewError
from pipelines.publish.labels import COLUMNS
from pipelines.publish.release import RECORD
from pipelines.publish.reviews import RULES, TARGETS

EXCERPT = 600
"""Characters of a document's text shown as an excerpt."""
LABELS = COLUMNS
"""The reference panel's per-item columns that ``--flagged`` reads."""


@dataclass(frozen=True)
class Shown:
    """A reviewed field: its name, label and value as text, and the value a correction starts
    from (``""`` when it cannot be corrected)."""

    name: str
    label: str
    value: str
    correctable: bool = False
    many: bool = False


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence: a heading, its text and where it came from."""

    heading: str
    text: str
    url: str = ""


@dataclass(frozen=True)
class ReviewItem:
    """One item of the release as the page shows it."""

    dataset: str
    config: str
    item: str
    title: str
    fields: tuple[Shown, ...]
    evidence: tuple[Evidence, ...] = ()
    rules: tuple[tuple[str, str], ...] = ()
    """KPR replacement rules (original, replacement) its records carry."""
    labels: dict[str, Any] = field(default_factory=dict)
    """The reference panel's labels of the item (empty without them)."""


def release_record(export: Path, dataset: str) -> dict[str, Any]:
    """``release.json`` of one dataset's export; an error names the file when it is missing."""
    path = export / dataset / RECORD
    if not path.is_file():
        raise MissingInputError(f"missing {path} (the built release of {dataset})", path)
    return json.loads(path.read_text("utf-8"))


def config_rows(folder: Path, config: str, columns: Sequence[str] | None = None) -> list[dict]:
    """The published rows of ``config`` (every split's shards, in name order), ``columns`` only
    (those present) when given."""
    shards = sorted((folder / config).glob("*.parquet"))
    if not shards:
        raise MissingInputError(f"missing {folder / config}/*.parquet (config {config!r})")
    rows: list[dict] = []
    for shard in shards:
        names = pq.read_schema(shard).names
        wanted = None if columns is None else [c for c in columns if c in names]
        rows += pq.read_table(shard, columns=wanted).to_pylist()
    return rows


def _shown(dataset: str, values: dict[str, str]) -> tuple[Shown, ...]:
    return tuple(
        Shown(f.name, f.label, values.get(f.name, ""), f.correctable, f.many)
        for f in TARGETS[dataset].fields
    )


def _lines(values: Iterable[str]) -> str:
    return "\n".join(values)


def lveval_items(folder: Path, record: dict[str, Any]) -> list[ReviewItem]:
    """LV-Eval's QA items, with the confusing facts and KPR rules of their level records."""
    facts: dict[str, list[str]] = {}
    rules: dict[str, list[tuple[str, str]]] = {}
    for config in record["configs"]:
        if config == "qa":
            continue
        for row in config_rows(folder, config, ["qa_id", "confusing_facts", RULES]):
            if row.get("confusing_facts"):
                facts.setdefault(row["qa_id"], row["confusing_facts"])
            if row.get(RULES):
                rules.setdefault(row["qa_id"], [(r["orig"], r["repl"]) for r in row[RULES]])
    items = []
    for row in config_rows(folder, "qa"):
        qa = row["qa_id"]
        found = rules.get(qa, [])
        values = {
            "question": row["question"],
            "answers": _lines(row["answers"]),
            "evidence": _count(len(row["evidence"]), "passage") + ", below",
            "confusing_facts": _lines(facts.get(qa, [])) or "none in the records",
            RULES: _lines(f"{o} -> {r}" for o, r in found) or "none in the records",
        }
        evidence = tuple(
            Evidence(f"Evidence passage {e['passage_id']}", e["text"]) for e in row["evidence"]
        )
        items.append(
            ReviewItem(
                "lveval", "qa", qa, row["question"], _shown("lveval", values), evidence,
                tuple(found), _labels(row),
            )
        )  # fmt: skip
    return items


def summhay_items(folder: Path, record: dict[str, Any]) -> list[ReviewItem]:
    """SummHay's subtopics, each insight with the haystack documents that carry it."""
    texts = {
        (row["topic_id"], d["document_id"]): d["text"]
        for row in config_rows(folder, "haystacks", ["topic_id", "documents"])
        for d in row["documents"]
    }
    items = []
    for row in config_rows(folder, "subtopics"):
        evidence = []
        for insight in row["insights"]:
            evidence.append(Evidence(f"Insight {insight['insight_id']}", insight["text"]))
            for doc in insight["gold_document_ids"]:
                text = texts.get((row["topic_id"], doc), "(not in the haystack)")
                evidence.append(Evidence(f"… carried by document {doc}", _around(text, insight)))
        values = {
            "query": row["query"],
            "insights": _count(len(row["insights"]), "insight") + ", below",
        }
        key = item_keys_of(row, ("topic_id", "subtopic_id"))
        title = f"{row['topic']}: {row['subtopic']}"
        items.append(
            ReviewItem("summhay", "subtopics", key, title, _shown("summhay", values),
                       tuple(evidence), labels=_labels(row))
        )  # fmt: skip
    return items


def _around(text: str, insight: dict[str, Any]) -> str:
    """The excerpt of a document around the insight's first figure-bearing words, else its start."""
    words = insight["text"].split()
    for size in (6, 4):
        for start in range(max(1, len(words) - size + 1)):
            at = text.find(" ".join(words[start : start + size]))
            if at >= 0:
                begin = max(0, at - EXCERPT // 3)
                return ("…" if begin else "") + text[begin : begin + EXCERPT] + "…"
    return text[:EXCERPT] + ("…" if len(text) > EXCERPT else "")


def wikigen_items(folder: Path, record: dict[str, Any]) -> list[ReviewItem]:
    """WikiGenBench's entries with their documents (title, URL, excerpt)."""
    items = []
    for row in config_rows(folder, "entries"):
        evidence = tuple(
            Evidence(
                f"{d.get('origin', '')} document: {d.get('title') or d.get('url')}",
                (d.get("text") or "(text not published: URL-only export)")[:EXCERPT],
                d.get("url") or "",
            )
            for d in row["documents"]
        )
        values = {
            "title": row["title"],
            "summary": row["summary"],
            "outline": row["outline_text"],
            "documents": _count(len(row["documents"]), "document") + ", below",
        }
        items.append(
            ReviewItem("wikigenbench", "entries", row["event_id"], row["title"],
                       _shown("wikigenbench", values), evidence, labels=_labels(row))
        )  # fmt: skip
    return items


def item_keys_of(row: dict[str, Any], ids: tuple[str, ...]) -> str:
    """The item id of one row (its ``ids`` joined by ``/``)."""
    return "/".join(str(row[c]) for c in ids)


def _labels(row: dict[str, Any]) -> dict[str, Any]:
    """The row's panel labels; a SummHay row's come from its insights (each labelled): the
    lowest ``solvable``, the highest ``closed_book`` and the hardest ``difficulty``."""
    own = {k: row[k] for k in LABELS if k in row and row[k] is not None}
    if own or not row.get("insights"):
        return own
    insights = [_labels(i) for i in row["insights"]]
    out: dict[str, Any] = {}
    for key, pick in (("solvable", min), ("closed_book", max)):
        values = [i[key] for i in insights if key in i]
        if values:
            out[key] = pick(values)
    levels = [i["difficulty"] for i in insights if "difficulty" in i]
    if levels:
        out["difficulty"] = max(levels, key=LEVELS.index)
    return out


READERS: dict[str, Callable[[Path, dict[str, Any]], list[ReviewItem]]] = {
    "lveval": lveval_items,
    "summhay": summhay_items,
    "wikigenbench": wikigen_items,
}


def flagged(item: ReviewItem) -> bool:
    """Whether the reference panel flagged the item: not solved by all of it with the evidence,
    solved by some of it without, or extreme."""
    labels = item.labels
    return (
        labels.get("solvable", 1.0) < 1.0
        or labels.get("closed_book", 0.0) > 0
        or labels.get("difficulty") == "extreme"
    )


def load_items(
    export: Path,
    datasets: Sequence[str],
    *,
    sample: int | None = None,
    seed: int = 0,
    only_flagged: bool = False,
) -> tuple[str, list[ReviewItem]]:
    """The release's version and the items to review: every item of ``datasets`` in release
    order, the flagged ones only, then a seeded sample of ``sample`` (the same at every start)."""
    items: list[ReviewItem] = []
    versions = {}
    for name in datasets:
        if name not in READERS:
            raise ReviewError(f"--dataset {name!r}: choose from {', '.join(READERS)}")
        record = release_record(export, name)
        versions[name] = record["version"]
        found = READERS[name](export / name, record)
        known = set(record["configs"].get(TARGETS[name].config, {}))
        items += [i for i in found if i.item in known]
    if len(set(versions.values())) > 1:
        raise ReviewError(f"{export}: the exports are of different releases: {versions}")
    if only_flagged:
        if not any(item.labels for item in items):
            raise ReviewError(
                f"no item of {', '.join(datasets)} in {export} carries panel labels "
                f"({', '.join(LABELS)}); run the validate stage, or review a --sample"
            )
        items = [i for i in items if flagged(i)]
    if sample is not None and sample < len(items):
        items = random.Random(seed).sample(items, sample)
    return next(iter(versions.values())), items


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
