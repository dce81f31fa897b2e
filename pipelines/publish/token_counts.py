"""The ``tokens`` column of a long-context config: per row, the tokens of what a harness sends
(or of a text alone) in each of ``publish.tokenizers``, counted by ``benchsmith_scoring.tokens``.

The column is a struct with one int64 field per tokenizer name, in the order of
``publish.tokenizers``; a field is null where the row has no text to count (a document that could
not be fetched, documents published as URLs only). What a config counts is declared in the
registry (``ConfigSpec.tokens``): the request its harness task sends, the prompt framed as each
tokenizer's chat plus the reference answer (:meth:`Tokenizer.count_request`), or a text alone
(:data:`pipelines.publish.views.TEXTS`, :meth:`Tokenizer.count`). Counts are exact; the
tokenizers remember each line's count, so a passage that recurs across rows, levels and variants
is encoded once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from benchsmith_scoring import harness as shipped
from benchsmith_scoring.tokens import Tokenizer
from pipelines.errors import PublishError
from pipelines.publish.registry import REQUEST, ConfigSpec
from pipelines.publish.views import TEXTS

COLUMN = "tokens"
FRAMINGS = {
    "openai-chat": (
        "OpenAI's chat accounting: 3 tokens per message plus its role and content, and 3 more "
        'priming the reply (the OpenAI Cookbook, "How to count tokens with tiktoken")'
    ),
    "chat-template": "the tokenizer's own chat template, rendered with the generation prompt",
    "none": "no chat framing: the prompt's text alone (the tokenizer has no chat template)",
}
"""What each :attr:`Tokenizer.framing` adds around a prompt, for the card."""

Prompt = str | list[dict[str, str]]
Counted = tuple[Prompt, str | None] | str | None
"""What one row's count covers: a harness request (prompt, reference answer), a text, or
nothing (a null count)."""


def measure(spec: ConfigSpec) -> Callable[[Mapping[str, Any]], Counted]:
    """The function giving what a row of config ``spec`` counts, as ``spec.tokens`` declares."""
    if spec.tokens == REQUEST:
        task = spec.harness
        prompt = getattr(shipped, task.prompt, None) if task else None
        if task is None or prompt is None:
            raise PublishError(
                f"config {spec.name!r} counts its harness request, but names no prompt function "
                "of benchsmith_scoring.harness (ConfigSpec.harness.prompt)"
            )
        return lambda row: (prompt(row), row.get(task.target))
    if spec.tokens not in TEXTS:
        raise PublishError(
            f"config {spec.name!r}: tokens {spec.tokens!r} is neither {REQUEST!r} nor a text of "
            f"pipelines.publish.views.TEXTS ({', '.join(TEXTS)})"
        )
    return TEXTS[spec.tokens].of


def count(tokenizer: Tokenizer, counted: Counted) -> int | None:
    """Tokens of a request (framed prompt plus answer) or of a text; None for nothing."""
    if counted is None:
        return None
    if isinstance(counted, tuple):
        return tokenizer.count_request(*counted)
    return tokenizer.count(counted)


def token_column(table: pa.Table, spec: ConfigSpec, tokenizers: Sequence[Tokenizer]) -> pa.Array:
    """The ``tokens`` struct of every row of ``table`` (published rows of config ``spec``)."""
    what = measure(spec)
    try:
        counted = [what(row) for row in table.to_pylist()]
    except (KeyError, TypeError) as exc:
        raise PublishError(
            f"config {spec.name!r} (from {spec.source}): cannot render what its tokens column "
            f"counts ({spec.tokens}): {type(exc).__name__} {exc}"
        ) from exc
    fields = [pa.array([count(t, c) for c in counted], pa.int64()) for t in tokenizers]
    return pa.StructArray.from_arrays(fields, names=[t.name for t in tokenizers])


def covers(spec: ConfigSpec) -> str:
    """What the config's ``tokens`` column counts, in words, for the card's field table."""
    if spec.tokens == REQUEST and spec.harness is not None:
        return (
            f"the request its harness task sends: `{spec.harness.prompt}(row)` of "
            "`scoring/benchsmith_scoring/harness.py` (the shipped prompt file rendered with the "
            f"row), framed as each tokenizer's chat, plus the reference `{spec.harness.target}`"
        )
    return TEXTS[spec.tokens].covers + ", alone" if spec.tokens in TEXTS else ""


def description(spec: ConfigSpec) -> str:
    """The ``tokens`` field's description: its unit and what it counts."""
    return (
        "Tokens per tokenizer (one int64 field per tokenizer name; see Lengths in tokens) of "
        f"{covers(spec)}."
    )
