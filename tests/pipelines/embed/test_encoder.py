"""The encoder against sentence-transformers, and its batching, pooling and prefixes."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pipelines.embed.agreement import agreement, neighbours
from pipelines.embed.batching import padding_ratio, plan_batches, width_of
from pipelines.embed.encoder import Encoder
from pipelines.embed.models import ModelError, default_minilm
from pipelines.embed.registry import ENCODERS, EncoderSpec, resolve

AGREEMENT_TEXTS = 64
"""Passages the agreement tests compare on: short ones and ones past MiniLM's 256 tokens."""


@pytest.fixture(scope="module")
def compared(passages: list[str]) -> list[str]:
    texts = passages[:AGREEMENT_TEXTS]
    assert min(len(t.split()) for t in texts) < 20 and max(len(t.split()) for t in texts) > 256
    return texts


@pytest.fixture(scope="module")
def reference(compared: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(default_minilm(), device="cpu")
    return model.encode(compared, batch_size=32, normalize_embeddings=True)


def test_float32_agrees_with_sentence_transformers(compared, reference) -> None:
    ours = Encoder(resolve("minilm"), dtype="float32").encode(compared)
    cos = np.sum(ours * reference, axis=1)
    assert cos.min() >= 0.9999


def test_bfloat16_meets_the_cpu_agreement_goals(compared, reference) -> None:
    ours = Encoder(resolve("minilm"), dtype="bfloat16").encode(compared)
    result = agreement(reference, ours)
    assert result.min_cosine >= 0.99 and result.mean_cosine >= 0.999
    assert result.overlap >= 0.99


def test_order_and_vectors_do_not_depend_on_batching(passages) -> None:
    texts = passages[:24]  # short and long ones, some past MiniLM's 256 tokens
    assert min(len(t.split()) for t in texts) < 20 and max(len(t.split()) for t in texts) > 256
    small = Encoder(
        resolve("minilm"), dtype="float32", batch_tokens=300, max_batch=3, block_texts=7
    )
    large = Encoder(resolve("minilm"), dtype="float32", batch_tokens=60000)
    a, stats = small.encode_with_stats(texts)
    b = large.encode(texts)
    assert np.allclose(a, b, atol=1e-5)
    assert stats.batches > len(texts) / 3 and stats.texts == len(texts)
    # a text alone gives the same vector as within a batch
    assert np.allclose(large.encode([texts[7]])[0], b[7], atol=1e-5)


def test_batches_respect_the_budget_and_sort_by_length() -> None:
    rng = random.Random(1)
    lengths = [rng.randint(1, 300) for _ in range(500)]
    batches = plan_batches(lengths, budget=2048, max_batch=64)
    assert sorted(i for b in batches for i in b) == list(range(500))
    for batch in batches:
        assert len(batch) <= 64
        assert len(batch) * max(lengths[i] for i in batch) <= 2048 or len(batch) == 1
    assert padding_ratio(lengths, batches) < 0.05
    unsorted = [list(range(i, min(i + 8, 500))) for i in range(0, 500, 8)]
    assert padding_ratio(lengths, unsorted) > 0.3


def test_rounded_widths_bound_the_shapes_however_many_texts() -> None:
    rng = random.Random(2)
    shapes = {}
    for n in (500, 5000, 50000):
        lengths = [rng.randint(1, 256) for _ in range(n)]
        batches = plan_batches(lengths, budget=2048, max_batch=512, multiple=16, cap=256)
        assert sorted(i for b in batches for i in b) == list(range(n))
        seen = set()
        for batch in batches:
            width = width_of(max(lengths[i] for i in batch), 16, 256)
            assert width % 16 == 0 and len(batch) * width <= 2048
            # a batch is full for its width, or a power of two
            assert len(batch) == 2048 // width or len(batch) & (len(batch) - 1) == 0
            seen.add((len(batch), width))
        shapes[n] = seen
        assert padding_ratio(lengths, batches, 16, 256) < 0.1
    # 100x the texts, no more shapes than 16 widths x (1 full + 8 powers of two) allow
    assert len(shapes[50000]) <= 16 * 9
    assert len(shapes[50000] - shapes[5000]) <= len(shapes[5000]) // 2
    # the cap holds a width at the encoder's maximum even when it is not a multiple
    assert width_of(250, 16, 250) == 250 and width_of(300, 16, 250) == 304


def test_cls_pooling_prefixes_and_a_separate_query_encoder(tiny_bert: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    spec = EncoderSpec("t", str(tiny_bert), "cls", False, "query: ", "passage: ", 64)
    encoder = Encoder(spec, dtype="float32")
    text = "Floodgates held at Meridal."
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    model = AutoModel.from_pretrained(tiny_bert).eval()
    with torch.inference_mode():
        expected = model(**tokenizer(["passage: " + text], return_tensors="pt")).last_hidden_state[
            0, 0
        ]
    assert np.allclose(encoder.encode([text])[0], expected.numpy(), atol=1e-5)
    # the query side adds its own prefix
    plain = Encoder(replace(spec, query_prefix="", passage_prefix=""), dtype="float32")
    assert np.allclose(encoder.encode([text], "query"), plain.encode(["query: " + text]), atol=1e-5)
    # DPR style: another model for queries
    dual = Encoder(replace(spec, query_model=str(tiny_bert), query_prefix=""), dtype="float32")
    assert dual.models("query") is not dual.models("passage")


def test_fingerprint_changes_with_precision() -> None:
    spec = resolve("minilm")
    assert spec.fingerprint(dtype="float32", quantize="none") != spec.fingerprint(
        dtype="bfloat16", quantize="none"
    )
    assert resolve("not/in-registry") == EncoderSpec("not/in-registry", "not/in-registry")
    assert {"minilm", "dpr", "gtr", "e5", "bge"} <= set(ENCODERS)


def test_unknown_model_names_the_encoder(tmp_path: Path) -> None:
    encoder = Encoder(EncoderSpec("x", str(default_minilm())), dtype="float32")
    encoder.spec = EncoderSpec("missing", str(tmp_path / "nope"))
    encoder._source = str(tmp_path / "nope")
    with pytest.raises(ModelError, match="cannot load encoder 'missing'"):
        encoder.encode(["text"])


def test_neighbour_overlap_of_identical_vectors_is_one() -> None:
    vectors = np.random.default_rng(0).normal(size=(30, 8))
    assert agreement(vectors, vectors).overlap == 1.0
    assert neighbours(vectors, 3).shape == (30, 3)
    noisy = vectors + np.random.default_rng(1).normal(scale=2.0, size=vectors.shape)
    assert agreement(vectors, noisy).overlap < 0.9


def test_overlap_treats_near_duplicate_neighbours_as_tied() -> None:
    rng = np.random.default_rng(2)
    base = rng.normal(size=(12, 16))
    # rows 0 and 1 are near-duplicates: as row 2's neighbours their order is noise
    base[1] = base[0] + 1e-5
    swapped = base.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    assert agreement(base, swapped, k=1).overlap == 1.0
    far = base.copy()
    far[2] = rng.normal(size=16)
    assert agreement(base, far, k=1).overlap < 1.0


def test_replicas_share_the_batches_and_order_is_kept(tiny_bert: Path, passages) -> None:
    """The multi-GPU schedule, run here with two CPU replicas of one model."""
    import copy

    spec = EncoderSpec("t", str(tiny_bert), "mean", True, "", "", 64)
    encoder = Encoder(spec, dtype="float32", batch_tokens=128, max_batch=2)
    alone = encoder.encode(passages)
    first = encoder.models("passage")[0]
    replicas = [first, copy.deepcopy(first)]
    calls = [0, 0]
    for n, model in enumerate(replicas):
        model.register_forward_hook(lambda *_, n=n: calls.__setitem__(n, calls[n] + 1))
    encoder._models["passage"] = replicas
    encoder.devices = ["cpu", "cpu"]
    spread, stats = encoder.encode_with_stats(passages)
    assert np.allclose(spread, alone, atol=1e-6)
    assert sum(calls) == stats.batches and min(calls) > 0
