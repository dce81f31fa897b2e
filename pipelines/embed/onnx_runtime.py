"""ONNX Runtime as a second encoder backend (CPU): export once, offline, and reuse the export.

The loaded float32 model is exported with ``torch.onnx`` (no network: it is the model already in
memory), with the batch and sequence axes left dynamic, into a cache folder keyed by the model,
its pooling, torch, onnx and onnxruntime versions. ``int8`` quantizes the export's weights
dynamically with ``onnxruntime.quantization``. Either file is written beside its final name and
renamed into place, so a killed export leaves nothing half-written.

:class:`OnnxModel` is called like the transformers model it replaces (``input_ids``,
``attention_mask`` as torch tensors) and answers with ``last_hidden_state`` or
``pooler_output``, so the encoder's batching and pooling stay one code path.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pipelines.embed.models import ModelError

OPSET = 17


def available() -> bool:
    """Whether onnxruntime and onnx (for the export) can be imported."""
    from pipelines.extras import installed

    return installed("onnxruntime") and installed("onnx")


def _folder_state(source: str) -> list[tuple[str, int, int]]:
    """Name, size and mtime of a local model folder's files: a changed model exports again."""
    folder = Path(source)
    if not folder.is_dir():
        return []
    return sorted(
        (p.name, p.stat().st_size, int(p.stat().st_mtime)) for p in folder.iterdir() if p.is_file()
    )


def export_key(source: str, identity: str, pooled: bool, quantize: str) -> str:
    """The cache folder name of one export."""
    import onnx
    import onnxruntime
    import torch

    blob = {
        "identity": identity,
        "folder": _folder_state(source),
        "pooled": pooled,
        "quantize": quantize,
        "opset": OPSET,
        "versions": [torch.__version__, onnx.__version__, onnxruntime.__version__],
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()[:16]


def _export(model: Any, pooled: bool, path: Path) -> None:
    import torch

    class Head(torch.nn.Module):
        def __init__(self, inner: Any):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask)
            return out.pooler_output if pooled else out.last_hidden_state

    ids = torch.full((2, 16), 1000, dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}
    scratch = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        warnings.simplefilter("ignore")  # the tracer's notes on Python booleans and opsets
        torch.onnx.export(
            Head(model).eval(),
            (ids, torch.ones_like(ids)),
            str(scratch),
            dynamo=False,
            opset_version=OPSET,
            input_names=["input_ids", "attention_mask"],
            output_names=["output"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "output": {0: "batch"}},
        )
    os.replace(scratch, path)


def _quantize(source: Path, path: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    scratch = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    logging.disable(logging.WARNING)  # its advice to pre-process, printed on every call
    try:
        quantize_dynamic(source, scratch, weight_type=QuantType.QInt8)
    finally:
        logging.disable(logging.NOTSET)
    os.replace(scratch, path)


def exported(
    model: Any, source: str, identity: str, pooled: bool, quantize: str, cache: Path
) -> Path:
    """The ONNX file of ``model`` (float32, or int8 weights), from the cache or exported now."""
    if not available():
        raise ModelError(
            "embed.backend onnx needs onnxruntime and onnx: pip install 'benchsmith[onnx]'"
        )
    folder = cache / export_key(source, identity, pooled, quantize)
    folder.mkdir(parents=True, exist_ok=True)
    plain = folder / "model.onnx"
    if quantize != "int8":
        if not plain.is_file():
            _export(model, pooled, plain)
        return plain
    int8 = folder / "model.int8.onnx"
    if not int8.is_file():
        base = exported(model, source, identity, pooled, "none", cache)
        _quantize(base, int8)
    return int8


class OnnxModel:
    """An ONNX Runtime session answering like a transformers encoder."""

    def __init__(self, path: Path, pooled: bool, threads: int):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        self.pooled = pooled
        self.path = path

    def __call__(self, input_ids: Any, attention_mask: Any) -> SimpleNamespace:
        import torch

        (output,) = self.session.run(
            ["output"],
            {"input_ids": input_ids.numpy(), "attention_mask": attention_mask.numpy()},
        )
        tensor = torch.from_numpy(output)
        if self.pooled:
            return SimpleNamespace(pooler_output=tensor)
        return SimpleNamespace(last_hidden_state=tensor)
