"""What a response cache holds, read directly: the answers it will never serve."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def unusable_answers(cache: Path) -> int:
    """Answers stored but never served: rejected (unparsed, failed check) or unfinished
    (``finish_reason`` not ``stop``). A rerun of the same asks sends exactly these again."""
    with sqlite3.connect(cache) as db:
        (count,) = db.execute(
            "SELECT COUNT(*) FROM responses WHERE rejected IS NOT NULL OR finish_reason != 'stop'"
        ).fetchone()
    return int(count)
