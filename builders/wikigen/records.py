"""Typed records of the wiki stage and their Arrow schemas, kept in one place."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa


@dataclass(frozen=True)
class Section:
    """One heading of an article and its plain text (subsections are separate sections)."""

    level: int
    title: str
    text: str


@dataclass(frozen=True)
class Reference:
    """One ``<ref>`` citation: rendered cite text plus the cited URL ('' when it has none).

    ``archive_url``, ``archive_date`` and ``access_date`` are the citation's own ``archive-url``,
    ``archive-date`` and ``access-date`` as written ('' when absent): where an archived copy
    is, and when the editor read the page (the web stage tries that copy, and the archive
    snapshot closest to that date, when the live link is gone).
    """

    name: str
    cite_text: str
    url: str
    archive_url: str = ""
    archive_date: str = ""
    access_date: str = ""


@dataclass(frozen=True)
class ExternalLink:
    """One link of the article's External links section."""

    url: str
    title: str


def _infobox_rows(infobox: dict[str, str]) -> list[dict[str, str]]:
    """An infobox as Parquet stores it: key/value rows, in order."""
    return [{"key": k, "value": v} for k, v in infobox.items()]


def _article_parts(row: dict[str, Any]) -> dict[str, Any]:
    """The infobox, sections and references of an article or entry row, as records."""
    return {
        "infobox": {kv["key"]: kv["value"] for kv in row["infobox"]},
        "sections": [Section(**s) for s in row["sections"]],
        "references": [Reference(**r) for r in row["references"]],
    }


@dataclass(frozen=True)
class RenderTally:
    """What rendering met on one page that no reader renders perfectly: ``{{convert}}``
    templates (``conversions``), the unit codes of those printed as written for want of a name
    (``raw_units``), formulas shown as TeX (``math``), and the words of the tables left out
    (``table_words``). Counted in the wiki stage's ``stats.json``; not stored in the record."""

    conversions: int = 0
    raw_units: tuple[str, ...] = ()
    math: int = 0
    table_words: int = 0


@dataclass(frozen=True)
class Fidelity:
    """How faithfully a reader turned the page's source into text.

    ``source_headings`` counts the headings of the wikitext (outside comments, ``<nowiki>``,
    ``<pre>`` and refs), ``headings`` the ones the reader found (skipped sections included),
    ``leftover_markup`` the wiki markup tokens (``{{``, ``[[``, ``<ref``, ``{|``, quote runs)
    left in the text. ``suspect`` says why the page looks wrong, or is empty when it does not.
    ``tally`` is kept in memory only, for the stage's counters (:class:`RenderTally`); a record
    read back has an empty one.
    """

    source_headings: int = 0
    headings: int = 0
    leftover_markup: int = 0
    suspect: str = ""
    tally: RenderTally = field(default_factory=RenderTally, compare=False, repr=False)


@dataclass(frozen=True)
class Article:
    """A wiki page as read by either reader, before event selection.

    ``created_at`` is the timestamp of the page's first revision (UTC), or ``None`` when the
    reader could not establish it; ``created_at_source`` says where it came from.
    """

    page_id: int
    title: str
    url: str
    namespace: int
    is_redirect: bool
    redirect_target: str
    created_at: datetime | None
    created_at_source: str
    last_revision_id: int
    last_revision_at: datetime | None
    categories: list[str]
    templates: list[str]
    infobox_type: str
    infobox: dict[str, str]
    summary: str
    sections: list[Section]
    outline: list[str]
    word_count: int
    references: list[Reference]
    external_links: list[ExternalLink]
    reader: str
    read_at: datetime
    length_unit: str = "words"
    """What ``word_count`` counts: ``words``, or ``characters`` on Chinese and Japanese wikis."""
    fidelity: Fidelity = field(default_factory=Fidelity)

    def to_row(self) -> dict[str, Any]:
        """Return the record as a row matching :data:`ARTICLE_SCHEMA`."""
        row = {**asdict(self), "infobox": _infobox_rows(self.infobox)}
        del row["fidelity"]["tally"]  # counted by the stage, not stored
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Article:
        """Rebuild a record from a row read back from Parquet."""
        links = [ExternalLink(**e) for e in row["external_links"]]
        fidelity = Fidelity(**row["fidelity"])
        return cls(**{**row, **_article_parts(row), "external_links": links, "fidelity": fidelity})


@dataclass(frozen=True)
class EntryDocument:
    """A usable related document as an entry carries it."""

    doc_id: str
    origin: str
    url: str
    title: str
    text: str
    word_count: int
    fetched_at: datetime | None


@dataclass(frozen=True)
class DocumentCount:
    """How many candidates of one origin ended in one status."""

    origin: str
    status: str
    count: int


@dataclass(frozen=True)
class Entry:
    """One WikiGenBench entry: an event's reference article, its usable documents, its split."""

    event_id: str
    title: str
    url: str
    split: str
    created_at: datetime | None
    summary: str
    outline: list[str]
    sections: list[Section]
    infobox: dict[str, str]
    infobox_type: str
    references: list[Reference]
    word_count: int
    documents: list[EntryDocument]
    document_counts: list[DocumentCount]

    def to_row(self) -> dict[str, Any]:
        """Return the record as a row matching :data:`ENTRY_SCHEMA`."""
        return {**asdict(self), "infobox": _infobox_rows(self.infobox)}

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Entry:
        """Rebuild a record from a row read back from Parquet."""
        documents = [EntryDocument(**d) for d in row["documents"]]
        counts = [DocumentCount(**c) for c in row["document_counts"]]
        values = {**row, **_article_parts(row), "documents": documents, "document_counts": counts}
        return cls(**values)


_TS = pa.timestamp("ms", tz="UTC")  # Parquet keeps no coarser unit

ARTICLE_SCHEMA = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("url", pa.string()),
        pa.field("namespace", pa.int32()),
        pa.field("is_redirect", pa.bool_()),
        pa.field("redirect_target", pa.string()),
        pa.field("created_at", _TS),
        pa.field("created_at_source", pa.string()),
        pa.field("last_revision_id", pa.int64()),
        pa.field("last_revision_at", _TS),
        pa.field("categories", pa.list_(pa.string())),
        pa.field("templates", pa.list_(pa.string())),
        pa.field("infobox_type", pa.string()),
        pa.field("infobox", pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))),
        pa.field("summary", pa.string()),
        pa.field(
            "sections",
            pa.list_(
                pa.struct([("level", pa.int8()), ("title", pa.string()), ("text", pa.string())])
            ),
        ),
        pa.field("outline", pa.list_(pa.string())),
        pa.field("word_count", pa.int32()),
        pa.field(
            "references",
            pa.list_(
                pa.struct(
                    [
                        ("name", pa.string()),
                        ("cite_text", pa.string()),
                        ("url", pa.string()),
                        ("archive_url", pa.string()),
                        ("archive_date", pa.string()),
                        ("access_date", pa.string()),
                    ]
                )
            ),
        ),
        pa.field(
            "external_links", pa.list_(pa.struct([("url", pa.string()), ("title", pa.string())]))
        ),
        pa.field("reader", pa.string()),
        pa.field("read_at", _TS),
        pa.field("length_unit", pa.string()),
        pa.field(
            "fidelity",
            pa.struct(
                [
                    ("source_headings", pa.int32()),
                    ("headings", pa.int32()),
                    ("leftover_markup", pa.int32()),
                    ("suspect", pa.string()),
                ]
            ),
        ),
    ]
)


FETCH_STATUSES = (
    "ok",
    "dead",
    "error",
    "timeout",
    "robots",
    "blocked_address",
    "too_large",
    "not_html",
    "binary",
    "rate_limited",
)
"""Every status a fetch can end in."""

DOCUMENT_STATUSES = (*FETCH_STATUSES, "extract_failed", "too_short", "duplicate", "mirror")
"""Every status a :class:`WebDocument` can end in; only ``ok`` documents enter the entries.

``rate_limited``: the server answered 429, or 503 with a Retry-After over
``web.fetch.max_retry_after_s``, kept in the reason; unlike the others it is not final, as the
next live run of the web stage fetches it again.
"""


@dataclass(frozen=True)
class WebDocument:
    """One related document of an event: a human-editor link or a search result, and its fate.

    Every candidate is kept, whatever its ``status``; only ``ok`` ones enter the entries.
    ``archived`` says the text comes from an archived copy of a human-editor link that ended
    ``dead``, ``error`` or ``not_html`` (``final_url`` is then the copy's URL): ``archive``
    names where it came from (``citation``: the citation's ``archive-url``; ``wayback``: the
    Wayback Machine's snapshot closest to the access date), ``memento_at`` when the copy was
    made (UTC, None when the archive does not say).
    """

    event_id: str
    doc_id: str
    origin: str  # "human" | "search"
    url: str
    canonical_url: str
    status: str
    reason: str
    final_url: str = ""
    http_status: int | None = None
    title: str = ""
    text: str = ""
    word_count: int = 0
    length_unit: str = "words"
    date: str = ""
    language: str = ""
    content_hash: str = ""
    fetched_at: datetime | None = None
    cite_text: str = ""
    query: str = ""
    rank: int | None = None
    snippet: str = ""
    archived: bool = False
    archive: str = ""
    memento_at: datetime | None = None

    def to_row(self) -> dict[str, Any]:
        """Return the record as a row matching :data:`DOCUMENT_SCHEMA`."""
        return asdict(self)


DOCUMENT_SCHEMA = pa.schema(
    [
        pa.field("event_id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("origin", pa.string(), nullable=False),
        pa.field("url", pa.string(), nullable=False),
        pa.field("canonical_url", pa.string()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("reason", pa.string()),
        pa.field("final_url", pa.string()),
        pa.field("http_status", pa.int32()),
        pa.field("title", pa.string()),
        pa.field("text", pa.string()),
        pa.field("word_count", pa.int32()),
        pa.field("length_unit", pa.string()),
        pa.field("date", pa.string()),
        pa.field("language", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("fetched_at", _TS),
        pa.field("cite_text", pa.string()),
        pa.field("query", pa.string()),
        pa.field("rank", pa.int32()),
        pa.field("snippet", pa.string()),
        pa.field("archived", pa.bool_()),
        pa.field("archive", pa.string()),
        pa.field("memento_at", _TS),
    ]
)

_ENTRY_DOCUMENT = pa.struct(
    [
        ("doc_id", pa.string()),
        ("origin", pa.string()),
        ("url", pa.string()),
        ("title", pa.string()),
        ("text", pa.string()),
        ("word_count", pa.int32()),
        ("fetched_at", _TS),
    ]
)

ENTRY_SCHEMA = pa.schema(
    [
        pa.field("event_id", pa.string(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("url", pa.string()),
        pa.field("split", pa.string(), nullable=False),
        pa.field("created_at", _TS),
        pa.field("summary", pa.string()),
        ARTICLE_SCHEMA.field("outline"),
        ARTICLE_SCHEMA.field("sections"),
        ARTICLE_SCHEMA.field("infobox"),
        pa.field("infobox_type", pa.string()),
        ARTICLE_SCHEMA.field("references"),
        pa.field("word_count", pa.int32()),
        pa.field("documents", pa.list_(_ENTRY_DOCUMENT)),
        pa.field(
            "document_counts",
            pa.list_(
                pa.struct([("origin", pa.string()), ("status", pa.string()), ("count", pa.int32())])
            ),
        ),
    ]
)
