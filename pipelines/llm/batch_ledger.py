"""A durable record of the batch jobs a run submitted, kept in the response cache's file.

A job (an OpenAI Batch API job or an Anthropic Message Batch) is recorded right after it is
created, with the digest of its request keys and the keys themselves (with their prompt names),
and stays ``open`` until its answers are in the cache. A rerun resumes every open job that holds
a request it needs instead of submitting it again. Jobs closed (answered, expired, failed,
cancelled) are never resumed. No key or request body is stored: only cache keys, prompt names,
batch ids and states.

Right before a job is created its *intent* is recorded: the digest of its keys, its number of
requests and the time. Recording the job drops it. An intent still there on a rerun means a run
stopped between creating a job and recording it, so the job may exist unrecorded: a provider
whose jobs carry no metadata (Anthropic's Message Batches) looks for it by the intent's count
and time (:meth:`pipelines.llm.message_batches.MessageBatches.find`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pipelines.llm.batch_provider import Intent

OPEN = "open"

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS batch_jobs (
        batch_id TEXT PRIMARY KEY,
        digest TEXT NOT NULL,
        state TEXT NOT NULL,
        requests INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS batch_job_keys (
        batch_id TEXT NOT NULL,
        key TEXT NOT NULL,
        prompt TEXT NOT NULL,
        PRIMARY KEY (batch_id, key)
    )""",
    """CREATE TABLE IF NOT EXISTS batch_intents (
        digest TEXT PRIMARY KEY,
        requests INTEGER NOT NULL,
        created_at TEXT NOT NULL
    )""",
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class BatchLedger:
    """Batch jobs by id: their digest, state and request keys, in SQLite (WAL, shared)."""

    def __init__(self, path: Path, busy_timeout_s: float = 60.0):
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.execute("PRAGMA journal_mode=WAL")
            for statement in _SCHEMA:
                db.execute(statement)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """A short-lived connection: jobs change a few times per step, from any thread."""
        with closing(sqlite3.connect(self.path, timeout=self.busy_timeout_s)) as db, db:
            yield db

    def intend(self, digest: str, requests: int) -> None:
        """Note that a job of ``requests`` requests with ``digest`` is about to be created."""
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO batch_intents VALUES (?, ?, ?)",
                (digest, requests, _now()),
            )

    def intent(self, digest: str) -> Intent | None:
        """The intent to create a job with ``digest`` that no recorded job fulfilled."""
        with self._db() as db:
            row = db.execute(
                "SELECT requests, created_at FROM batch_intents WHERE digest = ?", (digest,)
            ).fetchone()
        if row is None:
            return None
        return Intent(digest, row[0], datetime.fromisoformat(row[1]))

    def record(self, batch_id: str, digest: str, prompts: Mapping[str, str]) -> None:
        """Record an open job and its requests (cache key to prompt name), and drop the intent
        of its digest, in one transaction."""
        now = _now()
        with self._db() as db:
            db.execute("DELETE FROM batch_intents WHERE digest = ?", (digest,))
            db.execute(
                "INSERT OR IGNORE INTO batch_jobs VALUES (?, ?, ?, ?, ?, ?)",
                (batch_id, digest, OPEN, len(prompts), now, now),
            )
            db.executemany(
                "INSERT OR IGNORE INTO batch_job_keys VALUES (?, ?, ?)",
                [(batch_id, key, prompt) for key, prompt in prompts.items()],
            )

    def close(self, batch_id: str, state: str) -> None:
        """Mark a job finished with its final status; it is never resumed again."""
        with self._db() as db:
            db.execute(
                "UPDATE batch_jobs SET state = ?, updated_at = ? WHERE batch_id = ?",
                (state, _now(), batch_id),
            )

    def open_jobs(self) -> dict[str, dict[str, str]]:
        """Open jobs by id, each with its requests (cache key to prompt name)."""
        with self._db() as db:
            rows = db.execute(
                "SELECT j.batch_id, k.key, k.prompt FROM batch_jobs j "
                "JOIN batch_job_keys k ON k.batch_id = j.batch_id WHERE j.state = ?",
                (OPEN,),
            ).fetchall()
        jobs: dict[str, dict[str, str]] = {}
        for batch_id, key, prompt in rows:
            jobs.setdefault(batch_id, {})[key] = prompt
        return jobs

    def known(self) -> set[str]:
        """Every recorded job id, open or closed."""
        with self._db() as db:
            return {row[0] for row in db.execute("SELECT batch_id FROM batch_jobs")}

    def state(self, batch_id: str) -> str | None:
        """A job's state (``open`` or its final status), or ``None`` if never recorded."""
        with self._db() as db:
            row = db.execute(
                "SELECT state FROM batch_jobs WHERE batch_id = ?", (batch_id,)
            ).fetchone()
        return None if row is None else row[0]
