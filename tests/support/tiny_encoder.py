"""A tiny randomly initialised BERT with MiniLM's tokenizer: an encoder that costs nothing to
load or run, for tests whose subject is not the vectors (pooling, memory, DVC's behaviour)."""

from __future__ import annotations

from pathlib import Path


def save_tiny_bert(folder: Path) -> Path:
    """Save a 2-layer, 32-wide BERT (seeded) with MiniLM's tokenizer into ``folder``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from pipelines.embed.models import default_minilm

    tokenizer = AutoTokenizer.from_pretrained(default_minilm())
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
