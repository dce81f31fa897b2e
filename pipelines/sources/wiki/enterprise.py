"""Read a Wikimedia Enterprise HTML dump (NDJSON, one article a line, plain or compressed) into
Article records, rendering each page's ``article_body.html`` as the live html reader does.

The fields used are ``name``, ``identifier``, ``url``, ``namespace.identifier``,
``version.identifier``, ``date_modified`` and ``article_body.html``. Enterprise dumps carry no
creation date, so ``created_at`` is left empty for the wiki stage to look up (creation log or
API), as for a pages-articles dump. A line that is not JSON, or lacks a name, id or HTML,
becomes a drop naming the file and line; the rest are read.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from builders.drops import Drop
from builders.wikigen.records import Article
from pipelines.sources.wiki.article import build_article, guarded, page_drop
from pipelines.sources.wiki.wikitext import PageRules
from pipelines.sources.wiki.xml_source import open_maybe_compressed


def _complete(row: dict[str, Any]) -> bool:
    body = row.get("article_body")
    html = body.get("html") if isinstance(body, dict) else None
    return bool(row.get("name")) and str(row.get("identifier", "")).isdigit() and bool(html)


def _time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


def _article(
    row: dict[str, Any], rules: PageRules, read_at: datetime, limit_s: float
) -> tuple[Article | Drop, float]:
    about = {
        "page_id": int(row["identifier"]),
        "title": str(row["name"]),
        "namespace": int((row.get("namespace") or {}).get("identifier", 0)),
    }
    url = str(row.get("url") or "")
    build = partial(
        build_article,
        **about,
        html=row["article_body"]["html"],
        url=url,
        created_at=None,
        created_at_source="",
        last_revision_id=int((row.get("version") or {}).get("identifier") or 0),
        last_revision_at=_time(row.get("date_modified")),
        reader="html",
        read_at=read_at,
        rules=rules,
    )
    return guarded(build, limit_s=limit_s, url=url, reader="html", **about)


def read_enterprise(
    path: Path,
    rules: PageRules,
    *,
    read_at: datetime | None = None,
    page_time_limit_s: float = 60.0,
) -> Iterator[tuple[Article | Drop, float]]:
    """Yield each article of the dump (or a drop naming a bad line) and the seconds it took."""
    read_at = read_at or datetime.now(UTC).replace(microsecond=0)
    with open_maybe_compressed(path) as raw:
        lines = io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict) or not _complete(row):
                    raise ValueError("no name, numeric identifier or article_body.html")
            except ValueError as exc:
                where = f"{path.name} line {number}"
                detail = f"{where}: not an article record ({type(exc).__name__}: {exc})"
                yield (
                    page_drop(
                        "undecodable", detail, page_id=0, title=where, namespace=0, url="",
                        reader="html",
                    ),
                    0.0,
                )  # fmt: skip
                continue
            yield _article(row, rules, read_at, page_time_limit_s)
