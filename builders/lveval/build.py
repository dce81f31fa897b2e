"""One QA item at one level in all four variants: clean, CFI only, KPR only, both."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from builders.lveval.contexts import (
    Block,
    Corpus,
    Rendered,
    assemble,
    insert_facts,
    level_words,
    render,
)
from builders.lveval.kpr import Replacer
from builders.lveval.records import VARIANTS, QAItem, Rule, Variant
from builders.lveval.text import length
from builders.lveval.token_sizing import Plan, TokenCounts, assemble_tokens


@dataclass(frozen=True)
class Prepared:
    """A QA item with its checked confusing facts and replacement rules (level-independent)."""

    item: QAItem
    facts: tuple[str, ...]
    rules: tuple[Rule, ...]


class ReplacementError(RuntimeError):
    """An original survived replacement in a built context (a bug, never expected)."""


@dataclass(frozen=True)
class View:
    """One variant of a planned context: its rendered text, question, answers and facts."""

    variant: Variant
    rendered: Rendered
    question: str
    answers: list[str]
    facts: list[str]
    replacer: Replacer | None


def views(prepared: Prepared, blocks: Sequence[Block], confused: Sequence[Block]) -> Iterator[View]:
    """The four variants of a plan (``confused``: the plan with its facts inserted)."""
    item = prepared.item
    replace = Replacer(prepared.rules)
    for variant in VARIANTS:
        rewrite = replace if "kpr" in variant else None

        def same(text: str, rewrite: Replacer | None = rewrite) -> str:
            return rewrite(text) if rewrite else text

        yield View(
            variant,
            render(confused if "cfi" in variant else blocks, rewrite),
            same(item.question),
            [same(a) for a in item.answers],
            [same(f) for f in prepared.facts] if "cfi" in variant else [],
            rewrite,
        )


def records(
    prepared: Prepared,
    corpus: Corpus,
    level: str,
    size: int,
    *,
    seed: int,
    tolerance: float,
    copies: int = 1,
    pool_until: str = "",
    tokens: TokenCounts | None = None,
) -> Iterator[dict[str, Any]]:
    """The four variant rows of ``prepared`` at ``level`` (``size`` words, or tokens of
    ``tokens``' tokenizer when given), their distractors drawn from ``corpus`` (the pool of
    events created up to ``pool_until``)."""
    item = prepared.item
    rng = random.Random(f"{seed}:{item.qa_id}:{level}")

    def confuse(blocks: Sequence[Block]) -> list[Block]:
        cfi_rng = random.Random(f"{seed}:{item.qa_id}:{level}:cfi")
        return insert_facts(blocks, prepared.facts, cfi_rng, copies)

    if tokens is None:
        reserve = copies * sum(length(f, item.language) for f in prepared.facts)
        blocks = assemble(item, corpus, size, rng, tolerance=tolerance, reserve=reserve)
    else:

        def measure(blocks: list[Block]) -> tuple[int, int]:
            counts = [_request(tokens, v) for v in views(prepared, blocks, confuse(blocks))]
            return min(counts), max(counts)

        reserve = copies * sum(tokens.text(f) for f in prepared.facts)
        plan = Plan(item, corpus, rng, tokens, reserve)
        blocks = assemble_tokens(plan, size, measure, tolerance=tolerance)
    for view in views(prepared, blocks, confuse(blocks)):
        if tokens is None:
            yield _row(prepared, view, level, size, pool_until)
        else:
            yield _row(prepared, view, level, level_words(level), pool_until) | {
                "level_tokens": size,
                "tokenizer": tokens.tokenizer.name,
                "request_tokens": _request(tokens, view),
            }


def _request(tokens: TokenCounts, view: View) -> int:
    """The harness request's tokens of one variant: its prompt and its first answer."""
    answer = view.answers[0] if view.answers else None
    return tokens.request(view.question, view.rendered.context, answer)


def _row(prepared: Prepared, view: View, level: str, words: int, pool_until: str) -> dict[str, Any]:
    """The record of one variant at ``level`` (``words``: its ``level_words``)."""
    item, out, rewrite = prepared.item, view.rendered, view.replacer
    if rewrite and (left := rewrite.survivors(out.context)):
        raise ReplacementError(f"{item.qa_id}: {left[0]!r} survived in the {level} context")
    size = length(view.question, item.language) + length(out.context, item.language)
    return {
        "input": view.question,
        "context": out.context,
        "answers": view.answers,
        "length": size + sum(length(a, item.language) for a in view.answers),
        "dataset": item.dataset,
        "language": item.language,
        "answer_keywords": rewrite(item.answer_keywords) if rewrite else item.answer_keywords,
        "confusing_facts": view.facts,
        "qa_id": item.qa_id,
        "level": level,
        "level_words": words,
        "variant": view.variant,
        "hops": item.hops,
        "passage_ids": out.passage_ids,
        "evidence_positions": [asdict(p) for p in out.evidence],
        "confusing_fact_positions": [asdict(p) for p in out.facts],
        "replacement_rules": [
            {"orig": r.orig, "repl": r.repl, "scope": r.scope} for r in rewrite.rules
        ]
        if rewrite
        else [],
        "pool_until": pool_until,
    }
