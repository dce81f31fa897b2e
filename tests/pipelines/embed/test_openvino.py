"""The OpenVINO backend: the same ONNX export, compiled for this CPU, in float32 or bfloat16,
within the agreement floors of torch float32."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipelines.embed.agreement import agreement
from pipelines.embed.calibrate import candidates
from pipelines.embed.encoder import Encoder
from pipelines.embed.models import ModelError
from pipelines.embed.registry import EncoderSpec, resolve
from pipelines.embed.settings import EmbedSettings

pytest.importorskip("openvino")
pytest.importorskip("onnx")


def test_float32_and_bfloat16_agree_with_torch_float32(passages, tmp_path):
    passages = passages[:60]
    reference = Encoder(resolve("minilm"), dtype="float32").encode(passages)
    fingerprints = set()
    for dtype, cosine in (("float32", 0.9999), ("bfloat16", 0.999)):
        encoder = Encoder(resolve("minilm"), backend="openvino", dtype=dtype, onnx_cache=tmp_path)
        result = agreement(reference, encoder.encode(passages))
        assert result.mean_cosine >= cosine and result.overlap >= 0.99, dtype
        fingerprints.add(encoder.fingerprint())
    # one export serves both precisions; their vectors are cached apart
    assert len(list(tmp_path.glob("*/model.onnx"))) == 1 and len(fingerprints) == 2


def test_pooler_and_cls_heads_match_torch(tiny_bert: Path, tmp_path):
    texts = ["Floodgates held at Meridal.", "The river rose two metres overnight and more."]
    for pooling in ("pooler", "cls", "mean"):
        spec = EncoderSpec("t", str(tiny_bert), pooling, pooling == "mean", max_length=64)
        expected = Encoder(spec, dtype="float32").encode(texts)
        got = Encoder(spec, backend="openvino", dtype="float32", onnx_cache=tmp_path).encode(texts)
        assert np.allclose(expected, got, atol=1e-4), pooling


def test_openvino_refuses_what_it_does_not_run(tmp_path):
    with pytest.raises(ModelError, match="quantize"):
        Encoder(resolve("minilm"), backend="openvino", quantize="int8", onnx_cache=tmp_path)
    with pytest.raises(ModelError, match="float32 or bfloat16"):
        Encoder(resolve("minilm"), backend="openvino", dtype="float16", onnx_cache=tmp_path)


def test_calibration_candidates_include_openvino(tmp_path):
    base = {"onnx_cache": tmp_path, "batch_tokens": 2048, "attention": "eager"}
    auto = candidates(EmbedSettings.model_validate(base), cuda=False)
    assert {"openvino-float32/2048", "openvino-bfloat16/2048"} <= {c.label for c in auto}
    only = candidates(EmbedSettings.model_validate({**base, "backend": "openvino"}), cuda=False)
    assert {c.backend for c in only} == {"openvino"} and len(only) == 2
    assert not any(c.backend == "openvino" for c in candidates(
        EmbedSettings.model_validate(base), cuda=True
    ))  # fmt: skip
