"""Typed records of the chunk and embed stages and their Arrow schemas."""

from __future__ import annotations

import pyarrow as pa

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
"""One chunk: offsets are into the document's text, ends exclusive."""

SKIPPED_SCHEMA = pa.schema(
    [
        pa.field("corpus", pa.string()),
        pa.field("document_id", pa.string()),
        pa.field("entry_id", pa.string()),
        pa.field("reason", pa.string()),
    ]
)
"""A document that yielded no chunk, and why."""


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
