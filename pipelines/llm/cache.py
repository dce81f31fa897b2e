"""A persistent response cache in SQLite, safe for several threads and processes at once.

Answers are keyed by :meth:`ChatRequest.cache_key` (backend, model, messages, parameters, seed,
and the versions of the answer model and check that judge them), so a rebuild asks only the
questions it has not asked before. Every completion a model returned is stored, since it was paid
for (the budget counts it), but only a good one is ever served:

- an answer whose ``finish_reason`` is not ``stop`` (cut at ``max_tokens``, filtered) is stored
  with that reason and never served;
- an answer that did not parse or failed its check is marked with the reason
  (:meth:`ResponseCache.reject`) and never served again;
- a good answer replaces a bad one under the same key; a good one is never replaced.

So a rerun asks again exactly the questions whose answers were unusable. Keys never reach the
cache (they are not part of any request, and an answer that echoes a key's value has it
redacted before it arrives: ``chat_response``).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

from pipelines.llm.records import ChatResponse

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    prompt TEXT NOT NULL,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    finish_reason TEXT NOT NULL DEFAULT 'stop',
    rejected TEXT
)
"""
_ADDED = {"finish_reason": "TEXT NOT NULL DEFAULT 'stop'", "rejected": "TEXT"}
"""Columns a cache file written before them gets when it is opened."""
_GOOD = "rejected IS NULL AND finish_reason = 'stop'"


class ResponseCache:
    """Get and put completions by key. One connection per thread; WAL lets processes share it."""

    def __init__(self, path: Path, busy_timeout_s: float = 60.0):
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
            have = {row[1] for row in db.execute("PRAGMA table_info(responses)")}
            for name, kind in _ADDED.items():
                if name not in have:  # another process may add it first
                    with contextlib.suppress(sqlite3.OperationalError):
                        db.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")

    def _connect(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    def get(self, key: str) -> ChatResponse | None:
        """The stored good answer for ``key``, or ``None`` (none, or only an unusable one)."""
        row = (
            self._connect()
            .execute(
                "SELECT text, prompt_tokens, completion_tokens FROM responses "
                f"WHERE key = ? AND {_GOOD}",
                (key,),
            )
            .fetchone()
        )
        if row is None:
            return None
        return ChatResponse(row[0], row[1], row[2], cached=True)

    def put(
        self, key: str, response: ChatResponse, *, prompt: str, backend: str, model: str
    ) -> None:
        """Store an answer. A good answer already stored under ``key`` (another worker got there
        first) is kept; a bad one is replaced. An unfinished answer is stored as bad."""
        row = (
            key,
            prompt,
            backend,
            model,
            response.text,
            response.prompt_tokens,
            response.completion_tokens,
            datetime.now(UTC).isoformat(timespec="seconds"),
            response.finish_reason,
            None,
        )
        self._connect().execute(
            "INSERT INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO "
            "UPDATE SET text = excluded.text, prompt_tokens = excluded.prompt_tokens, "
            "completion_tokens = excluded.completion_tokens, created_at = excluded.created_at, "
            "finish_reason = excluded.finish_reason, rejected = NULL "
            f"WHERE NOT ({_GOOD})",
            row,
        )

    def reject(self, key: str, reason: str) -> None:
        """Mark the answer stored under ``key`` unusable (it did not parse or failed its check),
        with ``reason``: it is kept, and never served again."""
        self._connect().execute(
            "UPDATE responses SET rejected = ? WHERE key = ?", (reason[:1000], key)
        )

    def tokens(self, backend: str, model: str) -> tuple[int, int]:
        """Prompt and completion tokens of every answer stored for ``backend`` and ``model``."""
        row = (
            self._connect()
            .execute(
                "SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) "
                "FROM responses WHERE backend = ? AND model = ?",
                (backend, model),
            )
            .fetchone()
        )
        return int(row[0]), int(row[1])

    def mean_completion_tokens(self, backend: str, model: str) -> dict[str, float]:
        """The mean completion length of each prompt's stored answers from ``model``."""
        rows = (
            self._connect()
            .execute(
                "SELECT prompt, AVG(completion_tokens) FROM responses "
                "WHERE backend = ? AND model = ? GROUP BY prompt",
                (backend, model),
            )
            .fetchall()
        )
        return {prompt: float(mean) for prompt, mean in rows}

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
