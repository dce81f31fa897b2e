"""Read the wiki stage's selected events back as :class:`Article` records."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from builders.wikigen.records import Article
from pipelines.errors import MissingInputError


def read_articles(path: Path) -> list[Article]:
    """The selected events, as written by the wiki stage."""
    if not path.is_file():
        raise MissingInputError(f"missing {path} (the selected events)", path)
    return [Article.from_row(row) for row in pq.read_table(path).to_pylist()]
