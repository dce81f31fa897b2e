"""Tiny builders for records used across tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from builders.wikigen.records import Article


def make_article(**overrides: Any) -> Article:
    """Build an Article that passes every selection rule, then apply ``overrides``."""
    values: dict[str, Any] = {
        "page_id": 1,
        "title": "2026 Example floods",
        "url": "https://wiki.example/wiki/2026_Example_floods",
        "namespace": 0,
        "is_redirect": False,
        "redirect_target": "",
        "created_at": datetime(2026, 3, 1, 12, tzinfo=UTC),
        "created_at_source": "history",
        "last_revision_id": 10,
        "last_revision_at": datetime(2026, 3, 2, tzinfo=UTC),
        "categories": ["2026 floods"],
        "templates": ["Infobox flood"],
        "infobox_type": "flood",
        "infobox": {"date": "1 March 2026"},
        "summary": "A flood.",
        "sections": [],
        "outline": [],
        "word_count": 1500,
        "references": [],
        "external_links": [],
        "reader": "dump",
        "read_at": datetime(2026, 11, 20, tzinfo=UTC),
    }
    values.update(overrides)
    return Article(**values)
