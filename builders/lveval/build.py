"""One QA item at one level in all four variants: clean, CFI only, KPR only, both."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from builders.lveval.contexts import Corpus, assemble, insert_facts, render
from builders.lveval.kpr import Replacer
from builders.lveval.records import VARIANTS, QAItem, Rule
from builders.lveval.text import length


@dataclass(frozen=True)
class Prepared:
    """A QA item with its checked confusing facts and replacement rules (level-independent)."""

    item: QAItem
    facts: tuple[str, ...]
    rules: tuple[Rule, ...]


class ReplacementError(RuntimeError):
    """An original survived replacement in a built context (a bug, never expected)."""


def records(
    prepared: Prepared,
    corpus: Corpus,
    level: str,
    words: int,
    *,
    seed: int,
    tolerance: float,
    copies: int = 1,
    pool_until: str = "",
) -> Iterator[dict[str, Any]]:
    """The four variant rows of ``prepared`` at ``level`` (``words`` long), their distractors
    drawn from ``corpus`` (the pool of events created up to ``pool_until``)."""
    item = prepared.item
    rng = random.Random(f"{seed}:{item.qa_id}:{level}")
    reserve = copies * sum(length(f, item.language) for f in prepared.facts)
    blocks = assemble(item, corpus, words, rng, tolerance=tolerance, reserve=reserve)
    cfi_rng = random.Random(f"{seed}:{item.qa_id}:{level}:cfi")
    confused = insert_facts(blocks, prepared.facts, cfi_rng, copies)
    replace = Replacer(prepared.rules)
    for variant in VARIANTS:
        rewrite = replace if "kpr" in variant else None
        out = render(confused if "cfi" in variant else blocks, rewrite)
        facts = list(prepared.facts) if "cfi" in variant else []

        def same(text: str, rewrite: Replacer | None = rewrite) -> str:
            return rewrite(text) if rewrite else text

        question, answers = same(item.question), [same(a) for a in item.answers]
        if rewrite and (left := rewrite.survivors(out.context)):
            raise ReplacementError(f"{item.qa_id}: {left[0]!r} survived in the {level} context")
        size = length(question, item.language) + length(out.context, item.language)
        yield {
            "input": question,
            "context": out.context,
            "answers": answers,
            "length": size + sum(length(a, item.language) for a in answers),
            "dataset": item.dataset,
            "language": item.language,
            "answer_keywords": same(item.answer_keywords),
            "confusing_facts": [same(f) for f in facts],
            "qa_id": item.qa_id,
            "level": level,
            "level_words": words,
            "variant": variant,
            "hops": item.hops,
            "passage_ids": out.passage_ids,
            "evidence_positions": [asdict(p) for p in out.evidence],
            "confusing_fact_positions": [asdict(p) for p in out.facts],
            "replacement_rules": [
                {"orig": r.orig, "repl": r.repl, "scope": r.scope} for r in replace.rules
            ]
            if rewrite
            else [],
            "pool_until": pool_until,
        }
