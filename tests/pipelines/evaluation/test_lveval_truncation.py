"""The middle cut tokenizes a head and a tail window only, and gives exactly what tokenizing the
whole context gives, under WordPiece, byte-level BPE and SentencePiece-style tokenizers."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from pipelines.embed.models import load_tokenizer
from pipelines.evaluation.lveval import middle_truncate, middle_truncate_whole

ROOT = Path(__file__).resolve().parents[3]


def prose() -> str:
    """The snapshot wiki's text, tags stripped: real sentences, names, numbers, markup."""
    xml = (ROOT / "snapshot" / "wiki" / "export.xml").read_text(encoding="utf-8")
    return re.sub(r"<[^>]+>", " ", xml)


def trained(pre_tokenizer: Any, text: str) -> Any:
    """A small BPE tokenizer trained here on ``text`` with ``pre_tokenizer``."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizer
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(
        vocab_size=400, initial_alphabet=alphabet, special_tokens=["[UNK]"], show_progress=False
    )
    tokenizer.train_from_iterator([text[:100_000]], trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer)


@pytest.fixture(scope="module")
def text() -> str:
    return prose()


@pytest.fixture(scope="module", params=["wordpiece", "byte_level_bpe", "metaspace_bpe"])
def tokenizer(request: pytest.FixtureRequest, text: str) -> Any:
    from tokenizers import pre_tokenizers

    if request.param == "wordpiece":
        return load_tokenizer(None)  # MiniLM's, the stage's default
    if request.param == "byte_level_bpe":  # GPT-2's kind: spaces belong to the next token
        return trained(pre_tokenizers.ByteLevel(add_prefix_space=False), text)
    return trained(pre_tokenizers.Metaspace(), text)  # SentencePiece's kind: spaces become "▁"


def contexts(text: str, rng: random.Random) -> list[str]:
    """Passages of the snapshot under LV-Eval's headers, of 2k to 24k characters."""
    out = []
    for size in (2_000, 8_000, 24_000):
        parts, at = [], rng.randrange(len(text) - size)
        while sum(map(len, parts)) < size:
            n = rng.randint(200, 3_000)
            parts.append(f"### Passage {len(parts) + 1}\n{text[at : at + n].strip()}")
            at = (at + n) % (len(text) - 3_000)
        out.append("\n\n".join(parts))
    return out


def noise(rng: random.Random, n: int) -> str:
    """Random text with runs of every whitespace, accents, CJK, digits and punctuation."""
    pieces = ["a", "b", "é", "über", "北京", "12", ",", ".", "'s", "—", " ", "  ", "\n", "\n\n",
              "\t", " \n ", "\r\n", "word", "Words"]  # fmt: skip
    return "".join(rng.choice(pieces) for _ in range(n))


def count(text: str, tokenizer: Any) -> int:
    return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])


def test_the_cut_equals_the_whole_texts_on_real_contexts_around_the_budget(
    tokenizer: Any, text: str
) -> None:
    rng = random.Random(30)
    for context in contexts(text, rng):
        total = count(context, tokenizer)
        budgets = {1, 3, 101, total // 7, total // 2, total - 1, total, total + 1}
        for budget in sorted(b for b in budgets if b > 0):
            assert middle_truncate(context, budget, tokenizer) == middle_truncate_whole(
                context, budget, tokenizer
            ), (len(context), budget, total)


def test_the_cut_equals_the_whole_texts_on_random_texts(tokenizer: Any) -> None:
    rng = random.Random(7)
    for _ in range(25):
        sample = noise(rng, rng.randint(0, 1_500))
        total = count(sample, tokenizer)
        for budget in {1, 2, 5, max(1, total // 3), max(1, total - 1), total + 1}:
            kept = middle_truncate(sample, budget, tokenizer)
            assert kept == middle_truncate_whole(sample, budget, tokenizer), (sample, budget)


def test_only_the_windows_are_tokenized_and_a_short_first_guess_is_widened(text: str) -> None:
    minilm = load_tokenizer(None)
    seen: list[int] = []

    def counting(piece: str, **kwargs: Any) -> Any:
        seen.append(len(piece))
        return minilm(piece, **kwargs)

    long = text[:300_000]
    assert middle_truncate(long, 2_000, counting) == middle_truncate_whole(long, 2_000, minilm)
    assert len(seen) == 2 and sum(seen) < len(long) / 10
    # words of a dozen letters, one token each: the first windows hold too few tokens
    words = ["international", "government", "information", "development", "independent"]
    rng = random.Random(3)
    sparse = " ".join(rng.choice(words) for _ in range(30_000))
    seen.clear()
    assert middle_truncate(sparse, 3_000, counting) == middle_truncate_whole(sparse, 3_000, minilm)
    assert len(seen) > 2 and sum(seen) < len(sparse) / 2


def test_a_text_without_spaces_is_tokenized_whole() -> None:
    minilm = load_tokenizer(None)
    chinese = "北京是中国的首都。" * 2_000
    assert middle_truncate(chinese, 300, minilm) == middle_truncate_whole(chinese, 300, minilm)
    assert count(middle_truncate(chinese, 300, minilm), minilm) == 300
