"""Token-exact levels: every row of every level and variant fits its level in the tokenizer's
count of the harness request, that count is a whole-text encode, and the items, facts, rules and
distractor order are word mode's."""

from __future__ import annotations

import pytest

from benchsmith_scoring.harness import lveval_prompt
from benchsmith_scoring.tokens import OPENAI_MESSAGE_TOKENS, Tokenizer, load
from builders.lveval.build import Prepared, records
from builders.lveval.contexts import AssemblyError, Corpus, level_tokens, level_words
from builders.lveval.records import VARIANTS, Passage, Rule
from builders.lveval.token_sizing import TokenCounts
from tests.builders.lveval.test_contexts import make_item
from tests.support.smollm import ensure_tokenizer
from tests.support.snapshot import ROOT

TOLERANCE = 0.05
LEVELS = ("1k", "2k", "3k")
SEED = 7


@pytest.fixture(scope="module")
def world(passages: list[str]) -> tuple[Corpus, list[Prepared]]:
    """The snapshot's real text as 120 distractors, and three items with a fact and a rule."""
    corpus = [Passage(f"p{k:03d}", "snapshot", "", text) for k, text in enumerate(passages)]
    prepared = []
    for k in range(3):
        item, support = make_item(k)
        corpus.append(support)
        fact = f"The Norvale{k} relief fund paid out {9000 + k} grants in the spring."
        prepared.append(Prepared(item, (fact,), (Rule(f"Norvale{k}", f"Quolin{k}", item.qa_id),)))
    return Corpus(corpus), prepared


@pytest.fixture(scope="module", params=["cl100k_base", "smollm2"])
def tokenizer(request: pytest.FixtureRequest) -> Tokenizer:
    if request.param == "smollm2":
        return load(f"smollm2={ensure_tokenizer(ROOT / '.cache')}")
    return load(request.param)


def build(world, tokens: TokenCounts | None) -> list[dict]:
    corpus, prepared = world
    size = level_words if tokens is None else level_tokens
    return [
        row
        for level in LEVELS
        for p in prepared
        for row in records(
            p, corpus, level, size(level), seed=SEED, tolerance=TOLERANCE, tokens=tokens
        )
    ]


@pytest.fixture(scope="module")
def token_rows(world, tokenizer: Tokenizer) -> list[dict]:
    return build(world, TokenCounts(tokenizer))


def whole_request(tok: Tokenizer, prompt: str, answer: str) -> int:
    """The request's tokens from whole-text encodes: the chat template rendered and encoded at
    once, or OpenAI's per-message accounting around the prompt encoded at once."""
    if tok.framing == "chat-template":
        assert tok.template is not None
        framed = len(tok.encode(tok.template([{"role": "user", "content": prompt}])))
    else:
        framed = 2 * OPENAI_MESSAGE_TOKENS + len(tok.encode("user")) + len(tok.encode(prompt))
    return framed + len(tok.encode(answer))


def test_every_row_of_every_level_and_variant_fits_its_level_in_tokens(
    token_rows: list[dict], tokenizer: Tokenizer
) -> None:
    assert len(token_rows) == len(LEVELS) * 3 * len(VARIANTS)
    for row in token_rows:
        budget = level_tokens(row["level"])
        prompt = lveval_prompt({"context": row["context"], "question": row["input"]})
        counted = tokenizer.count_request(prompt, row["answers"][0])
        assert budget * (1 - TOLERANCE) <= counted <= budget, (row["qa_id"], row["variant"])
        assert (
            counted == row["request_tokens"] == whole_request(tokenizer, prompt, row["answers"][0])
        )
        assert row["level_tokens"] == budget and row["level_words"] == level_words(row["level"])
        assert row["tokenizer"] == tokenizer.name


def test_items_facts_rules_and_distractor_order_are_word_modes(
    world, token_rows: list[dict]
) -> None:
    words = {(r["qa_id"], r["level"], r["variant"]): r for r in build(world, None)}
    same = ("input", "answers", "answer_keywords", "confusing_facts", "replacement_rules")
    supporting = {p.item.qa_id: set(p.item.supporting_ids) for p in world[1]}
    for row in token_rows:
        word = words[row["qa_id"], row["level"], row["variant"]]
        assert {k: row[k] for k in same} == {k: word[k] for k in same}
        assert [e["text"] for e in row["evidence_positions"]] == [
            e["text"] for e in word["evidence_positions"]
        ]
        # the same seeded order: one context's distractors lead the other's, but the cut one
        ours, theirs = (
            [p for p in r["passage_ids"] if p not in supporting[row["qa_id"]]] for r in (row, word)
        )
        shorter = min(len(ours), len(theirs)) - 1
        assert shorter > 0 and ours[:shorter] == theirs[:shorter]
    lengths = {r["length"] for r in token_rows if r["level"] == "2k"}
    assert max(lengths) < level_words("2k")  # a token level holds fewer words here


def test_a_level_the_corpus_cannot_fill_in_tokens_is_an_error_that_says_so(
    world, tokenizer: Tokenizer
) -> None:
    corpus, prepared = world
    with pytest.raises(AssemblyError, match=r"fills about \d+ of 1048576 tokens"):
        list(
            records(
                prepared[0], corpus, "1024k", 1 << 20, seed=SEED, tolerance=TOLERANCE,
                tokens=TokenCounts(tokenizer),
            )
        )  # fmt: skip


def test_variants_spread_wider_than_the_tolerance_cannot_be_cut_and_say_why(world) -> None:
    corpus, prepared = world
    tokens = TokenCounts(load("cl100k_base"))
    with pytest.raises(
        AssemblyError,
        match=r"no cut puts every variant's request in \[2045, 2048\] tokens \(the facts",
    ):
        list(records(prepared[0], corpus, "2k", 2048, seed=SEED, tolerance=0.001, tokens=tokens))
