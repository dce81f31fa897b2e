"""LV-Eval items through the LLM layer: questions per event, then a checked confusing fact and
checked replacement rules per item. Every failure is kept as a :class:`Drop` with its step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from builders.drops import Drop
from builders.lveval import cfi, kpr
from builders.lveval.answers import FactAnswer, QuestionsAnswer, RulesAnswer, known_passages
from builders.lveval.build import Prepared
from builders.lveval.contexts import HEADER_WORDS, Corpus
from builders.lveval.passages import entry_passages
from builders.lveval.pools import Pools
from builders.lveval.qa import to_item
from builders.lveval.records import Passage, QAItem, Rule, drop
from builders.lveval.settings import LVEvalSettings
from builders.lveval.text import length
from builders.lveval.token_sizing import TokenCounts
from pipelines.llm import Ask, Limits, LLMClient


@dataclass
class Built:
    """Items and drops accumulated across steps."""

    items: list[QAItem] = field(default_factory=list)
    prepared: list[Prepared] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)
    proposed: dict[str, list[Rule]] = field(default_factory=dict)


def event_name(entry: Mapping[str, Any]) -> str:
    """How a question names the event: "the Tessel Pass rail accident", "Cyclone Imre"."""
    title = entry["title"]
    summary = entry.get("summary") or ""
    return f"the {title}" if summary.startswith(f"The {title}") else title


def event_questions(
    client: LLMClient, entries: Sequence[Mapping[str, Any]], settings: LVEvalSettings, out: Built
) -> None:
    """Ask for questions about every event and keep the drafts that check out. An event with
    no passage is dropped without asking, and one whose answer holds no question is dropped."""
    s = settings.events
    asks, shown, asked = [], [], []
    for entry in entries:
        passages = _prompt_passages(entry, settings)
        if not passages:
            detail = "the event has no lead, section or document of 20 words or more"
            out.drops.append(
                drop(s.dataset, entry["event_id"], "questions", "no_passages", detail, kind="event")
            )
            continue
        asked.append(entry)
        shown.append({p.passage_id: p for p in passages})
        variables = {
            "event_id": entry["event_id"],
            "name": event_name(entry),
            "kind": entry.get("infobox_type") or "event",
            "infobox": list(entry.get("infobox") or []),
            "passages": [{"passage_id": p.passage_id, "text": p.text} for p in passages],
            "n": s.questions_per_event,
            "multi_hop": s.multi_hop_per_event,
        }
        limits = Limits(
            enums={"passage_id": list(shown[-1])},
            max_items={"questions": s.questions_per_event + s.multi_hop_per_event},
        )
        asks.append(
            Ask("lveval/questions", variables, QuestionsAnswer, known_passages(shown[-1]), limits)
        )
    outcomes = client.ask_many(asks, "lveval: questions", len(asks))
    for entry, passages, outcome in zip(asked, shown, outcomes, strict=True):
        event = entry["event_id"]
        if not outcome.ok:
            out.drops.append(
                drop(
                    s.dataset, event, "questions", "generation_failed", outcome.error, kind="event"
                )
            )
            continue
        if not outcome.value.questions:
            detail = "the answer holds no question"
            out.drops.append(
                drop(s.dataset, event, "questions", "no_questions", detail, kind="event")
            )
        for draft in outcome.value.questions:
            result = to_item(draft, passages, dataset=s.dataset, source=event)
            if isinstance(result, QAItem):
                out.items.append(result)
            else:
                out.drops.append(drop(s.dataset, event, "qa_check", *result, kind="event"))


def _prompt_passages(entry: Mapping[str, Any], settings: LVEvalSettings) -> list[Passage]:
    """The event's passages shown in its questions prompt: in order, while they fit
    ``events.max_prompt_words`` (the first always)."""
    passages: list[Passage] = []
    words = 0
    for passage in entry_passages(entry, settings.passage_words):
        if words and words + length(passage.text) > settings.events.max_prompt_words:
            break
        passages.append(passage)
        words += length(passage.text)
    return passages


def _evidence_vars(item: QAItem) -> dict[str, Any]:
    return {
        "qa_id": item.qa_id,
        "question": item.question,
        "answers": list(item.answers),
        "evidence": [e.text for e in item.evidence],
    }


def fits(item: QAItem, corpus: Corpus, words: int, tolerance: float) -> bool:
    """Whether the corpus holds enough distractors to fill ``item``'s largest level."""
    support = sum(length(corpus.get(p).text) + HEADER_WORDS for p in item.supporting_ids)
    return support + corpus.distractor_words(item) >= words * (1 - tolerance)


def prepare(
    client: LLMClient,
    pools: Pools,
    settings: LVEvalSettings,
    reviewed: Sequence[Rule],
    largest: int,
    out: Built,
    tokens: TokenCounts | None = None,
) -> None:
    """Confusing fact and replacement rules for every item, each from its own distractor pool
    (names to swap in, vocabulary to check against); items failing a check are dropped, and so
    are items whose pool cannot fill the ``largest`` level (words, or tokens of ``tokens``)."""
    items = []
    unit = "words" if tokens is None else f"{tokens.tokenizer.name} tokens"
    for item in dict.fromkeys(out.items):
        corpus = pools.of(item).corpus
        if tokens is None:
            ok = fits(item, corpus, largest, settings.tolerance)
        else:
            ok = tokens.fits(item, corpus, largest, settings.tolerance)
        if ok:
            items.append(item)
        else:
            detail = f"the corpus cannot fill {largest} {unit} around this item"
            out.drops.append(drop(item.dataset, item.qa_id, "assembly", "corpus_too_small", detail))
    fact_asks = [
        Ask(
            "lveval/confusing_fact",
            {**_evidence_vars(item), "names": cfi.swap_names(item, pools.of(item).names)},
            FactAnswer,
            lambda a, item=item: cfi.check(a.fact, item),
        )
        for item in items
    ]
    facts = client.ask_many(fact_asks, "lveval: confusing facts", len(fact_asks))
    kept: list[tuple[QAItem, str]] = []
    for item, outcome in zip(items, facts, strict=True):
        if outcome.ok:
            kept.append((item, outcome.value.fact.strip()))
        else:
            out.drops.append(drop(item.dataset, item.qa_id, "cfi", "rejected", outcome.error))

    def rules_check(item: QAItem, fact: str) -> Any:
        def check(answer: RulesAnswer) -> str | None:
            rules = [Rule(r.orig, r.repl, item.qa_id) for r in answer.rules]
            return kpr.problems(item, rules, pools.of(item).vocabulary[0], [fact])

        return check

    def rules_vars(item: QAItem) -> dict[str, Any]:
        found = kpr.item_names(item, pools.of(item).vocabulary[1])
        return {**_evidence_vars(item), "names": found, "max_rules": settings.kpr.max_rules}

    rule_asks = [
        Ask("lveval/keywords", rules_vars(item), RulesAnswer, rules_check(item, fact))
        for item, fact in kept
    ]
    answers = client.ask_many(rule_asks, "lveval: replacements", len(rule_asks))
    for (item, fact), outcome in zip(kept, answers, strict=True):
        if not outcome.ok:
            out.drops.append(drop(item.dataset, item.qa_id, "kpr", "rejected", outcome.error))
            continue
        proposed = [Rule(r.orig, r.repl, item.qa_id) for r in outcome.value.rules]
        out.proposed[item.qa_id] = proposed
        rules = kpr.resolve(proposed, reviewed, item)
        if problem := kpr.problems(item, rules, pools.of(item).vocabulary[0], [fact]):
            out.drops.append(drop(item.dataset, item.qa_id, "kpr", "reviewed_rule", problem))
            continue
        out.prepared.append(Prepared(item, (fact,), tuple(rules)))
