"""The GPU path: runs only where CUDA is visible (reported as skipped elsewhere)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pipelines.embed.agreement import agreement
from pipelines.embed.encoder import Encoder
from pipelines.embed.registry import resolve

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device visible")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_on_gpu_agrees_with_float32(passages: list[str], dtype: str) -> None:
    if dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bfloat16")
    reference = Encoder(resolve("minilm"), device="cpu", dtype="float32").encode(passages)
    ours = Encoder(resolve("minilm"), device="cuda", dtype=dtype).encode(passages)
    result = agreement(reference, ours)
    assert result.min_cosine >= 0.99 and result.overlap >= 0.95


def test_every_gpu_takes_batches_and_order_is_kept(passages: list[str]) -> None:
    encoder = Encoder(resolve("minilm"), device="cuda", batch_tokens=512)
    assert len(encoder.models("passage")) == torch.cuda.device_count()
    vectors = encoder.encode(passages)
    single = [encoder.encode([p])[0] for p in passages[:10]]
    assert np.allclose(vectors[:10], np.stack(single), atol=2e-2)


def test_pinned_batches_reach_the_device(passages: list[str]) -> None:
    encoder = Encoder(resolve("minilm"), device="cuda")
    batch = encoder._collate(encoder.tokenizer, [[101, 2000, 102]], [0])
    assert all(t.is_pinned() for t in batch.values())
