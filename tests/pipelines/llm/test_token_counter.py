"""``llm.tokenizer`` naming an OpenAI encoding: prompts counted as OpenAI accounts a chat."""

from __future__ import annotations

import bpe_openai
import pytest

from pipelines.errors import LLMError
from pipelines.llm.records import Message
from pipelines.llm.tokens import TokenCounter


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_an_openai_encoding_counts_as_openai_accounts_messages(name: str) -> None:
    messages = [
        Message("system", "You are a fair judge assistant."),
        Message("user", "###Response to evaluate:\n==Background==\nThe line reopened in 2026."),
    ]
    encoding = bpe_openai.get_encoding(name)
    # OpenAI's documented accounting: 3 tokens per message, its role and content, 3 priming
    expected = 3 + sum(3 + len(encoding.encode(m.role)) + len(encoding.encode(m.content))
                       for m in messages)  # fmt: skip
    counter = TokenCounter(name)
    assert counter.exact and counter.count(messages) == expected


def test_a_tokenizer_that_cannot_load_names_the_setting(tmp_path) -> None:
    with pytest.raises(LLMError, match=r"llm\.tokenizer"):
        TokenCounter(str(tmp_path / "absent"))
