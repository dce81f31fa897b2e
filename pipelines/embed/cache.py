"""The embedding cache: vectors by encoder fingerprint and text hash, in SQLite.

A rebuild that adds events embeds only chunks whose text it has not embedded with the same
encoder, precision and quantization before; a killed run keeps every batch it had stored.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"
_LOOKUP = 500  # keys per SELECT ... IN (...)


def text_key(fingerprint: str, text: str) -> str:
    """The cache key of ``text`` embedded by the encoder with ``fingerprint``."""
    return digest_key(fingerprint, hashlib.sha256(text.encode()).digest())


def digest_key(fingerprint: str, digest: bytes) -> str:
    """The cache key of the text whose SHA-256 is ``digest``, under ``fingerprint``."""
    return f"{fingerprint}:{digest.hex()}"


class EmbeddingCache:
    """float32 vectors by key; several processes may share it (WAL)."""

    def __init__(self, path: Path, busy_timeout_s: float = 60.0):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``keys`` (missing keys are absent)."""
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _LOOKUP):
            part = unique[start : start + _LOOKUP]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({marks})", part
            ):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Store vectors in one transaction: a batch is kept whole or not at all."""
        rows = [(k, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in items]
        self._db.execute("BEGIN")
        try:
            self._db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", rows)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]

    def close(self) -> None:
        self._db.close()
