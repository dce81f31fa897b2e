"""Typed records of LV-Eval-style sets and their Arrow schemas, kept in one place.

A :class:`QAItem` is built once; a :class:`ContextRecord` is one item at one length level in one
variant (``clean``, ``cfi``, ``kpr``, ``cfi_kpr``). Its columns are a superset of LV-Eval's
(``input, context, answers, length, dataset, language, answer_keywords, confusing_facts``).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

import pyarrow as pa

from builders.drops import Drop

Variant = Literal["clean", "cfi", "kpr", "cfi_kpr"]
VARIANTS: tuple[Variant, ...] = ("clean", "cfi", "kpr", "cfi_kpr")


def stable_id(prefix: str, *parts: str) -> str:
    """A short id that depends only on ``parts`` (so rebuilds keep it)."""
    digest = hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:12]
    return f"{prefix}-{digest}"


@dataclass(frozen=True)
class Passage:
    """One unit of a mixup context: an article section, a web document (or a piece of a long
    one), or a context of an imported QA dataset."""

    passage_id: str
    source: str
    title: str
    text: str
    language: str = "en"


@dataclass(frozen=True)
class Evidence:
    """A span of a supporting passage that the answer rests on (character offsets)."""

    passage_id: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class QAItem:
    """A verified question: its answers appear in its evidence."""

    qa_id: str
    dataset: str
    language: str
    source: str
    hops: int
    question: str
    answers: tuple[str, ...]
    answer_keywords: str
    evidence: tuple[Evidence, ...]

    @property
    def supporting_ids(self) -> tuple[str, ...]:
        """The supporting passages, in evidence order, each once."""
        return tuple(dict.fromkeys(e.passage_id for e in self.evidence))

    def to_row(self) -> dict[str, Any]:
        """Return the record as a row matching :data:`QA_SCHEMA`."""
        row = asdict(self)
        row["supporting_ids"] = list(self.supporting_ids)
        return row


@dataclass(frozen=True)
class Rule:
    """A keyword or phrase replacement: ``orig`` becomes ``repl`` wherever ``scope`` applies
    (``*``: every item; a dataset name; or one qa_id). ``repl`` None keeps ``orig`` (a reviewed
    veto of a proposed rule)."""

    orig: str
    repl: str | None
    scope: str = "*"
    origin: str = "proposed"

    def applies_to(self, item: QAItem) -> bool:
        """Whether the rule's scope covers ``item``."""
        return self.scope in ("*", item.dataset, item.qa_id)


@dataclass(frozen=True)
class Position:
    """Where an evidence span or a confusing fact sits in the rendered context."""

    passage_id: str
    passage: int
    start: int
    end: int
    depth: float
    text: str


@dataclass(frozen=True)
class EvalRecord:
    """What a baseline reads of one LV-Eval record (a row of ``records/*.parquet``)."""

    qa_id: str
    dataset: str
    language: str
    level: str
    level_words: int
    variant: str
    input: str
    context: str
    answers: list[str]
    answer_keywords: str
    evidence_positions: list[Position]

    COLUMNS: ClassVar[tuple[str, ...]] = (
        "qa_id", "dataset", "language", "level", "level_words", "variant", "input", "context",
        "answers", "answer_keywords", "evidence_positions",
    )  # fmt: skip

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> EvalRecord:
        """A record from a row read with :attr:`COLUMNS`."""
        values = {k: row[k] for k in cls.COLUMNS}
        values["evidence_positions"] = [Position(**e) for e in row["evidence_positions"]]
        return cls(**values)

    def key(self) -> dict[str, Any]:
        """The columns that name the record in every baseline table."""
        return {
            "qa_id": self.qa_id,
            "dataset": self.dataset,
            "level": self.level,
            "level_words": self.level_words,
            "variant": self.variant,
        }


_EVIDENCE = pa.struct(
    [("passage_id", pa.string()), ("start", pa.int64()), ("end", pa.int64()), ("text", pa.string())]
)
_RULE = pa.struct([("orig", pa.string()), ("repl", pa.string()), ("scope", pa.string())])
_POSITION = pa.struct(
    [
        ("passage_id", pa.string()),
        ("passage", pa.int32()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("depth", pa.float64()),
        ("text", pa.string()),
    ]
)

QA_SCHEMA = pa.schema(
    [
        pa.field("qa_id", pa.string(), nullable=False),
        pa.field("dataset", pa.string(), nullable=False),
        pa.field("language", pa.string()),
        pa.field("source", pa.string()),
        pa.field("hops", pa.int8()),
        pa.field("question", pa.string()),
        pa.field("answers", pa.list_(pa.string())),
        pa.field("answer_keywords", pa.string()),
        pa.field("evidence", pa.list_(_EVIDENCE)),
        pa.field("supporting_ids", pa.list_(pa.string())),
    ]
)

RECORD_SCHEMA = pa.schema(
    [
        # LV-Eval's fields
        pa.field("input", pa.string(), nullable=False),
        pa.field("context", pa.string(), nullable=False),
        pa.field("answers", pa.list_(pa.string())),
        pa.field("length", pa.int64()),
        pa.field("dataset", pa.string()),
        pa.field("language", pa.string()),
        pa.field("answer_keywords", pa.string()),
        pa.field("confusing_facts", pa.list_(pa.string())),
        # ours
        pa.field("qa_id", pa.string(), nullable=False),
        pa.field("level", pa.string(), nullable=False),
        pa.field("level_words", pa.int64()),
        pa.field("variant", pa.string(), nullable=False),
        pa.field("hops", pa.int8()),
        pa.field("passage_ids", pa.list_(pa.string())),
        pa.field("evidence_positions", pa.list_(_POSITION)),
        pa.field("confusing_fact_positions", pa.list_(_POSITION)),
        pa.field("replacement_rules", pa.list_(_RULE)),
        # distractors came from the events created up to this day (the item's first release)
        pa.field("pool_until", pa.string()),
    ]
)

TOKEN_RECORD_SCHEMA = (
    RECORD_SCHEMA.append(pa.field("level_tokens", pa.int64()))
    .append(pa.field("tokenizer", pa.string()))
    .append(pa.field("request_tokens", pa.int64()))
)
"""Records of a build in tokens (``length_unit: tokens``): :data:`RECORD_SCHEMA` (``length``
still LV-Eval's word count; ``level_words`` the level's label read in words, 128k as 128,000,
so levels sort and plot as in word mode), then the level in tokens (128k: 131,072), the
tokenizer's name and the tokens of the row's harness request (the shipped ``lveval/answer``
prompt rendered with the context and question, framed as the tokenizer's chat, plus the first
answer), which lands in ``[level_tokens x (1 - tolerance), level_tokens]``."""


def drop(
    dataset: str, item_id: str, step: str, reason: str, detail: str = "", *, kind: str = "qa"
) -> Drop:
    """The lveval stage's :class:`~builders.drops.Drop` of one item of ``dataset``."""
    return Drop("lveval", dataset, kind, item_id, step, reason, detail)
