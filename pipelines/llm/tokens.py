"""Counting a request's prompt tokens before it is sent, for the cost estimate and the budget.

With ``llm.tokenizer`` set (an OpenAI encoding, ``cl100k_base`` or ``o200k_base``; a local
tokenizer folder; or a Hub name already in the local cache), the messages are counted the way a
chat server counts them: OpenAI's message accounting for an OpenAI encoding
(:mod:`benchsmith_scoring.tokens`), through the tokenizer's chat template when it has one.
Unset, the count is the rough one used where a server reports no usage, and whatever prints it
says so.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from benchsmith_scoring.tokens import OPENAI_ENCODINGS, TokenizerError, load
from pipelines.errors import LLMError
from pipelines.llm.backends.base import estimate_tokens
from pipelines.llm.records import Message

PER_MESSAGE = 4
"""Tokens a chat format adds around each message where the tokenizer has no chat template."""


class TokenCounter:
    """Prompt tokens of a list of messages; ``exact`` when a real tokenizer counts them."""

    def __init__(self, tokenizer: str | None = None):
        self.name = tokenizer or ""
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._openai: Any = None
        if tokenizer in OPENAI_ENCODINGS:
            try:
                self._openai = load(tokenizer)
            except TokenizerError as exc:
                raise LLMError(f"llm.tokenizer: {exc}") from None
        elif tokenizer:
            from transformers import AutoTokenizer

            try:
                self._tokenizer = AutoTokenizer.from_pretrained(tokenizer)
            except (OSError, ValueError) as exc:
                raise LLMError(
                    f"llm.tokenizer {tokenizer!r} cannot be loaded ({exc}); give a local "
                    "tokenizer folder or a Hub name already in the local cache"
                ) from None

    @property
    def exact(self) -> bool:
        """Whether a real tokenizer counts (not the rough word-based estimate)."""
        return self._tokenizer is not None or self._openai is not None

    def count(self, messages: Sequence[Message]) -> int:
        """Tokens the messages take as a chat prompt, the generation prompt included."""
        if self._openai is not None:
            return self._openai.count_prompt(
                [{"role": m.role, "content": m.content} for m in messages]
            )
        if self._tokenizer is None:
            return sum(estimate_tokens(m.content) + PER_MESSAGE for m in messages)
        chat = [{"role": m.role, "content": m.content} for m in messages]
        with self._lock:  # fast tokenizers are not safe to share across threads
            if getattr(self._tokenizer, "chat_template", None):
                ids = self._tokenizer.apply_chat_template(
                    chat, add_generation_prompt=True, tokenize=True
                )
                if isinstance(ids, dict) or hasattr(ids, "keys"):
                    ids = ids["input_ids"]
                return len(ids)
            encoded = [len(self._tokenizer.encode(m["content"])) for m in chat]
        return sum(n + PER_MESSAGE for n in encoded)
