"""OpenVINO as a third encoder backend (CPU), reading the same ONNX export as ONNX Runtime.

OpenVINO compiles the exported graph for the CPU it runs on, with fused attention and
normalisation kernels; ``bfloat16`` asks it to infer in bfloat16 where the CPU has it (it falls
back to float32 where not, and calibration then times it as such).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any


def available() -> bool:
    """Whether openvino and onnx (for the export) can be imported."""
    from pipelines.extras import installed

    return installed("openvino") and installed("onnx")


class OpenVinoModel:
    """A compiled OpenVINO model answering like a transformers encoder."""

    def __init__(self, path: Path, pooled: bool, precision: str, threads: int):
        import openvino

        core = openvino.Core()
        config = {
            "INFERENCE_PRECISION_HINT": "bf16" if precision == "bfloat16" else "f32",
            "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_NUM_THREADS": threads,
        }
        self.compiled = core.compile_model(core.read_model(str(path)), "CPU", config)
        self.request = self.compiled.create_infer_request()
        self.output = self.compiled.output(0)
        self.pooled = pooled

    def __call__(self, input_ids: Any, attention_mask: Any) -> SimpleNamespace:
        import torch

        result = self.request.infer(
            {"input_ids": input_ids.numpy(), "attention_mask": attention_mask.numpy()}
        )
        tensor = torch.from_numpy(result[self.output].copy())
        if self.pooled:
            return SimpleNamespace(pooler_output=tensor)
        return SimpleNamespace(last_hidden_state=tensor)
