"""Accounting of model calls for ``stats.json``: asks, calls, cache hits, failures, tokens, cost."""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from typing import Any

FIELDS = (
    "asks",
    "calls",
    "cache_hits",
    "retries",
    "reasks",
    "failed",
    "prompt_tokens",
    "completion_tokens",
    "parsed",
    "malformed",
    "failed_checks",
    "unfinished",
)
"""asks: questions put (a structured item, re-asks included once); calls: requests the backend
answered or refused; cache_hits: answers served from the cache; tokens count answered calls only.
Of the answers received (re-asks included): parsed matched the schema, malformed did not (no
JSON, or the wrong shape), failed_checks parsed but failed the ask's content check, unfinished
were cut before the model finished (``finish_reason`` not ``stop``; not parsed)."""


class LLMUsage:
    """Thread-safe counters, per prompt."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_prompt: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.failure_reasons: Counter[str] = Counter()
        self._check_reasons: defaultdict[str, Counter[str]] = defaultdict(Counter)

    def add(self, prompt: str, **counts: int) -> None:
        """Add ``counts`` (names from :data:`FIELDS`) to ``prompt``'s counters."""
        unknown = set(counts) - set(FIELDS)
        if unknown:
            raise KeyError(f"unknown usage counters: {sorted(unknown)}")
        with self._lock:
            self._by_prompt[prompt].update(counts)

    def fail(self, prompt: str, reason: str) -> None:
        """Count one item given up, with a short reason class (text before the first colon)."""
        with self._lock:
            self._by_prompt[prompt]["failed"] += 1
            self.failure_reasons[reason.split(":", 1)[0]] += 1

    def rejected(self, prompt: str, reason: str) -> None:
        """Count one parsed answer that failed its check, with the reason's class."""
        with self._lock:
            self._by_prompt[prompt].update(parsed=1, failed_checks=1)
            self._check_reasons[prompt][reason] += 1

    def total(self, name: str) -> int:
        """One counter summed over prompts."""
        with self._lock:
            return sum(c[name] for c in self._by_prompt.values())

    def to_dict(
        self,
        *,
        backend: str,
        model: str,
        input_cost_per_mtok: float = 0.0,
        output_cost_per_mtok: float = 0.0,
        prompt_versions: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """The ``llm`` block of a stage's stats, with the cost estimate in USD."""
        with self._lock:
            by_prompt: dict[str, dict[str, Any]] = {
                name: {f: counts[f] for f in FIELDS}
                for name, counts in sorted(self._by_prompt.items())
            }
            check_reasons: Counter[str] = Counter()
            for name, reasons in self._check_reasons.items():
                by_prompt[name]["check_reasons"] = dict(reasons.most_common())
                check_reasons.update(reasons)
        totals = {f: sum(p[f] for p in by_prompt.values()) for f in FIELDS}
        cost = (
            totals["prompt_tokens"] * input_cost_per_mtok
            + totals["completion_tokens"] * output_cost_per_mtok
        ) / 1_000_000
        return {
            "backend": backend,
            "model": model,
            **totals,
            "estimated_cost_usd": round(cost, 6),
            "failure_reasons": dict(sorted(self.failure_reasons.items())),
            "check_reasons": dict(check_reasons.most_common()),
            "by_prompt": by_prompt,
            "prompt_versions": dict(sorted((prompt_versions or {}).items())),
        }


def answers_line(block: dict[str, Any], top: int = 3) -> str:
    """ "N answers parsed, M failed checks: reasons …, K malformed" from an ``llm`` stats block
    (or one prompt's entry in its ``by_prompt``)."""
    reasons = block.get("check_reasons") or {}
    shown = "; ".join(f"{r} ×{n}" for r, n in list(reasons.items())[:top])
    more = f"; {len(reasons) - top} more" if len(reasons) > top else ""
    line = f"{block.get('parsed', 0)} answers parsed, {block.get('failed_checks', 0)} failed checks"
    if shown:
        line += f": {shown}{more}"
    return f"{line}, {block.get('malformed', 0)} malformed"
