"""The ONNX Runtime backend: exported offline from the local model, reused from its cache, and
giving vectors within the agreement floors of torch float32."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from pipelines.embed.agreement import agreement
from pipelines.embed.calibrate import calibrate, candidates
from pipelines.embed.encoder import Encoder
from pipelines.embed.models import ModelError
from pipelines.embed.registry import EncoderSpec, resolve
from pipelines.embed.settings import EmbedSettings

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


COMPARED = 60
"""Passages the ONNX vectors are compared on; the int8 test reads the first 40."""


@pytest.fixture(scope="module")
def reference(passages: list[str]) -> np.ndarray:
    """Torch float32 vectors of the first :data:`COMPARED` passages, computed once: a text's
    vector does not depend on the texts batched with it (within 1e-5)."""
    return Encoder(resolve("minilm"), dtype="float32").encode(passages[:COMPARED])


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's ONNX cache: MiniLM is exported to float32 once (:func:`onnx_float32`), to
    int8 from that, and the calibration reads both instead of exporting again."""
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(scope="module")
def onnx_float32(exports: Path, passages: list[str]) -> tuple[Encoder, np.ndarray]:
    """An ONNX encoder exporting MiniLM into the empty cache, and its vectors of the first
    :data:`COMPARED` passages."""
    assert not list(exports.rglob("*.onnx"))
    onnx = Encoder(resolve("minilm"), backend="onnx", onnx_cache=exports)
    return onnx, onnx.encode(passages[:COMPARED])


def test_onnx_float32_agrees_with_torch_float32_and_its_export_is_reused(
    passages, reference, onnx_float32, exports
):
    onnx, vectors = onnx_float32
    result = agreement(reference, vectors)
    assert result.mean_cosine >= 0.9999 and result.min_cosine >= 0.999 and result.overlap >= 0.99
    # the export lies in the cache; a second encoder loads it instead of exporting again
    (export,) = exports.glob("*/model.onnx")
    stamp, files = export.stat().st_mtime_ns, set(exports.rglob("*"))
    again = Encoder(resolve("minilm"), backend="onnx", onnx_cache=exports)
    assert np.allclose(again.encode(passages[:5]), vectors[:5], atol=1e-6)
    assert export.stat().st_mtime_ns == stamp and set(exports.rglob("*")) == files
    assert not list(exports.rglob(".*.tmp"))
    # ONNX vectors are kept apart from torch's in the embedding cache
    assert onnx.fingerprint() != Encoder(resolve("minilm"), dtype="float32").fingerprint()


def test_int8_export_is_measured_against_the_floors(passages, reference, onnx_float32, exports):
    # quantized from the float32 export of ``onnx_float32``
    int8 = Encoder(resolve("minilm"), backend="onnx", quantize="int8", onnx_cache=exports)
    result = agreement(reference[:40], int8.encode(passages[:40]))
    # quantized weights move the vectors, but they are still the same model's
    assert 0.9 < result.mean_cosine < 0.99999
    assert {p.name for p in exports.glob("*/*.onnx")} == {"model.onnx", "model.int8.onnx"}


def test_pooler_and_cls_heads_match_torch(tiny_bert: Path, tmp_path):
    texts = ["Floodgates held at Meridal.", "The river rose two metres overnight and more."]
    for pooling in ("pooler", "cls", "mean"):
        spec = EncoderSpec("t", str(tiny_bert), pooling, pooling == "mean", max_length=64)
        torch_vectors = Encoder(spec, dtype="float32").encode(texts)
        onnx_vectors = Encoder(spec, backend="onnx", onnx_cache=tmp_path).encode(texts)
        assert np.allclose(torch_vectors, onnx_vectors, atol=1e-5), pooling


def test_a_changed_model_folder_is_exported_again(tiny_bert: Path, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_bert, folder)
    spec = EncoderSpec("t", str(folder), "mean", True, max_length=64)
    Encoder(spec, backend="onnx", onnx_cache=tmp_path / "onnx").encode(["a text"])
    weights = next(folder.glob("*.safetensors"))
    os.utime(weights, (1, 1))
    Encoder(spec, backend="onnx", onnx_cache=tmp_path / "onnx").encode(["a text"])
    assert len(list((tmp_path / "onnx").glob("*/model.onnx"))) == 2


def test_onnx_is_a_cpu_float32_backend(tmp_path):
    with pytest.raises(ModelError, match="float32"):
        Encoder(resolve("minilm"), backend="onnx", dtype="bfloat16", onnx_cache=tmp_path)


def test_calibration_weighs_onnx_against_torch(tmp_path, passages, onnx_float32, exports):
    # the candidates load the module's exports (``onnx_float32``, the int8 test)
    base = {
        "cache": tmp_path / "cache.sqlite",
        "calibration": tmp_path / "calibration.json",
        "onnx_cache": exports,
        "calibrate_min_texts": 0,
        "calibrate_texts": 24,
        "batch_tokens": 2048,
        "attention": "sdpa",
    }
    settings = EmbedSettings.model_validate({**base, "quantize": "auto"})
    options = candidates(settings, cuda=False)
    assert {c.label for c in options if c.backend == "onnx"} == {
        "onnx-float32/2048",
        "onnx-int8/2048",
    }
    assert not any(c.backend == "onnx" for c in candidates(settings, cuda=True))
    only_torch = EmbedSettings.model_validate({**base, "backend": "torch"})
    assert not any(c.backend == "onnx" for c in candidates(only_torch, cuda=False))
    result = calibrate(settings, passages[:24], 5000, cuda=False)
    rows = {r["candidate"]: r for r in result.measured}
    assert rows["onnx-float32/2048"]["passed"]
    assert rows["onnx-float32/2048"]["mean_cosine"] >= 0.9999
    # whatever wins passed the floors; int8 never does at these floors on MiniLM
    assert rows[result.chosen.label]["passed"]
    assert not rows["onnx-int8/2048"]["passed"] and result.chosen.label != "onnx-int8/2048"


def test_settings_name_the_backend(tmp_path):
    settings = EmbedSettings.model_validate({"backend": "onnx", "onnx_cache": tmp_path})
    assert settings.backend == "onnx"
    with pytest.raises(ValueError):
        EmbedSettings.model_validate({"backend": "tensorrt"})
