"""Count tokens with a real tokenizer, for context budgets."""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.embed.models import display_name, load_tokenizer


class TokenCounter:
    """Token counts of texts, without special tokens and without truncation."""

    def __init__(self, tokenizer: str | None = None):
        self.tokenizer = load_tokenizer(tokenizer)
        self.name = display_name(tokenizer)

    def count(self, texts: Sequence[str]) -> list[int]:
        """Tokens in each text."""
        if not texts:
            return []
        encoded = self.tokenizer(
            list(texts), add_special_tokens=False, truncation=False, verbose=False
        )
        return [len(ids) for ids in encoded["input_ids"]]
