"""The failure ledger: every ask a model stage gave up, written as ``llm_failures.parquet``.

One row per failed ask: which ask (the cache key of its first request, the prompt name and the
digest of the rendered messages), the model, why (``kind``: ``call_failed``, ``malformed``,
``failed_check``, ``unfinished`` or ``check_raised``; ``reason``: the whole reason, redacted),
how many requests it took (the first ask and its re-asks) and the last answer, cut to
:data:`RAW_CHARS` characters. ``benchsmith report`` lists the top reasons; ``benchsmith
estimate`` counts the asks a rerun would retry (none of them is served from the cache).
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FAILURES = "llm_failures.parquet"
RAW_CHARS = 2000
"""The most of a failed ask's last answer the ledger keeps."""

FAILURE_COLUMNS = (
    ("key", "string"),
    ("prompt", "string"),
    ("prompt_digest", "string"),
    ("model", "string"),
    ("kind", "string"),
    ("reason", "string"),
    ("attempts", "int32"),
    ("raw", "string"),
)
"""The ledger's columns and their Arrow types (pyarrow is imported only when a ledger is
written or read: the stage table names the file, and every CLI start reads the table)."""


class FailureLedger:
    """The failed asks of one client, in the order they were given up (thread-safe)."""

    def __init__(self) -> None:
        self._rows: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def add(
        self,
        *,
        key: str,
        prompt: str,
        prompt_digest: str,
        model: str,
        kind: str,
        reason: str,
        attempts: int,
        raw: str,
    ) -> None:
        """Record one failed ask (``reason`` and ``raw`` already redacted)."""
        row = {
            "key": key,
            "prompt": prompt,
            "prompt_digest": prompt_digest,
            "model": model,
            "kind": kind,
            "reason": reason,
            "attempts": attempts,
            "raw": raw[:RAW_CHARS],
        }
        with self._lock:
            self._rows.append(row)

    def rows(self) -> list[dict[str, Any]]:
        """A copy of the rows so far."""
        with self._lock:
            return list(self._rows)

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows)


def reason_class(reason: str) -> str:
    """A failure reason with its quoted values and numbers masked, so reasons that differ only
    in the item they name are counted together."""
    masked = re.sub(r"'[^']*'|\"[^\"]*\"", "…", reason)
    return re.sub(r"\d+", "N", masked)[:120]


def top_reasons(rows: Iterable[dict[str, Any]], top: int = 5) -> list[tuple[str, str, int]]:
    """The commonest failures of ledger ``rows``: (prompt, kind and masked detail, count)."""
    counts = Counter(
        (r["prompt"], f"{r['kind']}: {reason_class(r['reason'].partition(': ')[2] or r['reason'])}")
        for r in rows
    )
    return [(prompt, reason, n) for (prompt, reason), n in counts.most_common(top)]


def write_failures(path: Path, ledgers: Iterable[FailureLedger]) -> int:
    """Write the rows of ``ledgers`` to ``path``, sorted by model, prompt and key (an empty
    table when none failed); the count."""
    import pyarrow as pa

    from pipelines.outputs import TableWriter

    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in FAILURE_COLUMNS])
    count = 0
    rows = [row for ledger in ledgers for row in ledger.rows()]
    # in a stable order: asks given up by concurrent calls finish in any order
    rows.sort(key=lambda r: (r["model"], r["prompt"], r["key"]))
    with TableWriter(path, schema) as writer:
        for row in rows:
            writer.write(row)
            count += 1
    return count


def read_failures(path: Path) -> list[dict[str, Any]]:
    """The rows of a stage's ledger; none when the file does not exist."""
    if not path.is_file():
        return []
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()
