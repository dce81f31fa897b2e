"""Typed records of the chunk and embed stages, their Arrow schemas, and reading them back in
blocks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


@dataclass(frozen=True)
class Chunk:
    """One chunk of a document: offsets are into the document's text, ends exclusive."""

    chunk_id: str
    corpus: str
    document_id: str
    entry_id: str
    ordinal: int
    char_start: int
    char_end: int
    word_start: int
    word_end: int
    words: int
    text: str

    def to_row(self) -> dict[str, Any]:
        """Return the record as a row matching :data:`CHUNK_SCHEMA`."""
        return asdict(self)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Chunk:
        """Rebuild a record from a row read back from Parquet."""
        return cls(**row)


CHUNK_SCHEMA = pa.schema(
    [
        pa.field("chunk_id", pa.string(), nullable=False),
        pa.field("corpus", pa.string()),
        pa.field("document_id", pa.string()),
        pa.field("entry_id", pa.string()),
        pa.field("ordinal", pa.int32()),
        pa.field("char_start", pa.int64()),
        pa.field("char_end", pa.int64()),
        pa.field("word_start", pa.int64()),
        pa.field("word_end", pa.int64()),
        pa.field("words", pa.int32()),
        pa.field("text", pa.string()),
    ]
)
"""The Arrow schema of :class:`Chunk`."""


def embedding_schema(vector_dtype: str) -> pa.Schema:
    """Chunk id, model and vector (float16 by default)."""
    value = pa.float16() if vector_dtype == "float16" else pa.float32()
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("model", pa.string()),
            pa.field("vector", pa.list_(value)),
        ]
    )


def read_blocks(path: Path, size: int, columns: list[str]) -> Iterator[dict[str, list[Any]]]:
    """Blocks of a Parquet file, or of a folder of shards in name order."""
    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    for file in files:
        for batch in pq.ParquetFile(file).iter_batches(batch_size=size, columns=columns):
            yield batch.to_pydict()
