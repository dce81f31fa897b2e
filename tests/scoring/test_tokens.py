"""Token counts in real tokenizers: OpenAI's encodings from bpe-openai, SmolLM2's tokenizer.json
from the packaged GGUF, and a SentencePiece-style tokenizer trained here with ``tokenizers``.

Counting a line at a time must equal encoding the whole text; the chat framing must equal what
transformers' ``apply_chat_template`` gives for the same messages."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from benchsmith_scoring import tokens
from tests.support.smollm import ensure_tokenizer
from tests.support.snapshot import ROOT

WIKITEXT = (ROOT / "snapshot" / "wiki" / "export.xml").read_text("utf-8")
"""Real wikitext with markup, tables, lists, blank lines and indents."""


@pytest.fixture(scope="module")
def smollm2() -> Path:
    return ensure_tokenizer(ROOT / ".cache")


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Slices of the snapshot's wikitext, cut at arbitrary places (not only at line ends), and
    lines of its words in random order (so any word, ``/&gt;`` or ``|}``, may start a line)."""
    step = len(WIKITEXT) // 12
    slices = [WIKITEXT[i : i + step + 977] for i in range(0, len(WIKITEXT), step)]
    rng, words = random.Random(3), WIKITEXT.split()
    lines = ["\n".join(" ".join(rng.sample(words, rng.randint(1, 9))) for _ in range(3000))]
    return slices + lines


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_openai_counts_by_lines_equal_whole_text(name: str, texts: list[str]) -> None:
    tokenizer = tokens.load(name)
    assert tokenizer.boundary is not None
    assert tokenizer.framing == "openai-chat"
    for text in texts:
        assert tokenizer.count(text) == len(tokenizer.encode(text))
        assert tokenizer.ids(text) == tokenizer.encode(text)


def test_smollm2_counts_by_lines_equal_whole_text(smollm2: Path, texts: list[str]) -> None:
    tokenizer = tokens.load(f"smollm2={smollm2}")
    assert tokenizer.name == "smollm2"
    # GPT-2's split pattern gives a run's last line break to the next line
    assert tokenizer.boundary is tokens.BOUNDARIES[1]
    for text in texts:
        assert tokenizer.count(text) == len(tokenizer.encode(text))
    # a text past bpe-openai's one-million-character limit is counted in pieces, still exactly
    long = WIKITEXT * (1_200_000 // len(WIKITEXT) + 1)
    assert tokenizer.count(long) == len(tokenizer.encode(long))
    assert tokens.load("cl100k_base").count(long) > 0


def test_a_passage_recurring_is_counted_once() -> None:
    tokenizer = tokens.load("o200k_base")
    tokenizer._line.cache_clear()  # other tests count these lines too
    passage = "Flood waters rose over the bank.\nCrews worked through the night.\n"
    tokenizer.count(f"### Passage 1\n{passage}")
    before = tokenizer._line.cache_info()
    tokenizer.count(f"### Passage 7\n{passage}")
    after = tokenizer._line.cache_info()
    assert after.misses - before.misses == 1  # only the new header line
    assert after.hits - before.hits == 2


def test_chat_template_counts_equal_transformers(smollm2: Path) -> None:
    from transformers import AutoTokenizer

    reference = AutoTokenizer.from_pretrained(smollm2.parent)
    ours = tokens.load(str(smollm2))
    assert ours.framing == "chat-template"
    prompt = "Answer from the passages.\n\n### Passage 1\n" + WIKITEXT[:3000]
    chats = [
        [{"role": "user", "content": prompt}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": prompt}],
    ]
    for messages in chats:
        expected = reference.apply_chat_template(
            messages, tokenize=True, add_generation_prompt=True
        )["input_ids"]
        assert ours.count_prompt(messages) == len(expected)
    assert ours.count_request(prompt, "Port Imre") == ours.count_prompt(prompt) + len(
        reference.encode("Port Imre", add_special_tokens=False)
    )


def test_openai_framing_adds_the_documented_message_tokens() -> None:
    tokenizer = tokens.load("cl100k_base")
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "When?"}]
    content = sum(
        len(tokenizer.encode(m["role"])) + len(tokenizer.encode(m["content"])) for m in messages
    )
    # 3 per message and 3 to prime the reply; role and content are encoded apart
    assert tokenizer.count_prompt(messages) == 3 * 2 + content + 3


def test_a_tokenizer_that_prefixes_every_piece_is_counted_whole(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    trained = Tokenizer(models.BPE(unk_token="<unk>"))
    trained.pre_tokenizer = pre_tokenizers.Metaspace()
    trained.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<unk>"])
    trained.train_from_iterator(WIKITEXT.splitlines(), trainer)
    trained.save(str(tmp_path / "tokenizer.json"))
    tokenizer = tokens.load(str(tmp_path / "tokenizer.json"))
    assert tokenizer.name == tmp_path.name
    assert tokenizer.boundary is None
    assert tokenizer.framing == "none"
    text = WIKITEXT[:5000]
    assert tokenizer.count(text) == len(trained.encode(text, add_special_tokens=False).ids)


def test_pieces_join_back_and_stay_short() -> None:
    line = "word " * 50_000
    text = f"a\n\nb\n{line}\nend"
    for boundary in tokens.BOUNDARIES:
        parts = list(tokens.pieces(text, boundary))
        assert "".join(parts) == text
        assert max(map(len, parts)) <= tokens.MAX_PIECE_CHARS + len("word ")


def test_bad_tokenizers_are_named(tmp_path: Path) -> None:
    with pytest.raises(tokens.TokenizerError, match=r"'cl200k'.*OpenAI encoding"):
        tokens.load("cl200k")
    missing = tmp_path / "none" / "tokenizer.json"
    with pytest.raises(tokens.TokenizerError, match=f"no tokenizer file at {missing}"):
        tokens.load(str(missing))
    broken = tmp_path / "broken" / "tokenizer.json"
    broken.parent.mkdir()
    broken.write_text(json.dumps({"model": "no"}))
    with pytest.raises(tokens.TokenizerError, match=f"{broken} is not a readable tokenizer.json"):
        tokens.load(f"mine={broken}")
    with pytest.raises(tokens.TokenizerError, match="names repeat"):
        tokens.load_all(["cl100k_base", "cl100k_base=o200k_base"])
