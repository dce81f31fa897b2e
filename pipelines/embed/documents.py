"""The corpora that get chunked, read as a stream of ``{corpus, document_id, entry_id, text}``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipelines.errors import MissingInputError


def _batches(path: Path, columns: list[str], corpus: str) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        raise MissingInputError(f"missing {path} (corpus {corpus!r})", path)
    for batch in pq.ParquetFile(path).iter_batches(batch_size=256, columns=columns):
        yield from batch.to_pylist()


def read_documents(corpora: Sequence[str], paths: dict[str, Path]) -> Iterator[dict[str, Any]]:
    """Usable web documents and/or SummHay haystack documents, in file order."""
    for corpus in corpora:
        if corpus == "web":
            for row in _batches(paths["web"], ["doc_id", "event_id", "status", "text"], corpus):
                if row["status"] == "ok":
                    yield {
                        "corpus": "web",
                        "document_id": row["doc_id"],
                        "entry_id": row["event_id"],
                        "text": row["text"],
                    }
        elif corpus == "summhay":
            for row in _batches(paths["summhay"], ["topic_id", "documents"], corpus):
                for doc in row["documents"]:
                    yield {
                        "corpus": "summhay",
                        "document_id": f"{row['topic_id']}/{doc['document_id']}",
                        "entry_id": row["topic_id"],
                        "text": doc["text"],
                    }
