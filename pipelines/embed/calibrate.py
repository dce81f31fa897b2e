"""Choose the encoder's precision, attention, token budget and backend by measuring on this
machine.

A fixed default cannot be right everywhere: bfloat16 ran about 3x faster than float32 on one
2-core CPU with AVX-512 BF16 and 30% slower on another. So every setting left at ``auto``
(``embed.dtype``, ``attention``, ``batch_tokens``, ``backend``, and ``quantize: auto`` for int8)
is decided by timing each candidate on a sample of the stage's own texts, after a warm-up, and
keeping the fastest whose vectors pass the agreement floors against float32 (``min_cosine``,
``min_overlap``). Backends are torch, and ONNX Runtime and OpenVINO where installed. torch
float32 is always a candidate, so the choice is never slower than float32.

The result is kept in a JSON file beside the embedding cache under a machine fingerprint (CPU
model and flags or GPU name, cores, torch, onnxruntime and openvino versions, the encoder, the
candidates and floors): the next run reuses it, a changed fingerprint measures again. Explicit
settings are never overridden. A job with fewer texts than ``calibrate_min_texts`` and no stored
result does not pay for a calibration: it runs float32 (the precision every candidate is checked
against).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipelines.embed import onnx_runtime, openvino_runtime
from pipelines.embed.agreement import agreement
from pipelines.embed.encoder import CPU_BUDGET, GPU_BUDGET, Encoder, build_encoder
from pipelines.embed.records import read_blocks
from pipelines.embed.settings import EmbedSettings

CPU_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_int8", "amx_tile")
"""The CPU features that decide which precision is fast."""


@dataclass(frozen=True)
class Candidate:
    """One way to run the encoder."""

    dtype: str
    attention: str
    batch_tokens: int
    quantize: str = "none"
    backend: str = "torch"

    def options(self) -> dict[str, Any]:
        """The embed settings (and encoder options) this candidate sets, by their names."""
        return asdict(self)

    @property
    def label(self) -> str:
        mode = "int8" if self.quantize == "int8" else self.dtype
        if self.backend != "torch":
            return f"{self.backend}-{mode}/{self.batch_tokens}"
        return f"{mode}/{self.attention}/{self.batch_tokens}"


@dataclass
class Calibration:
    """What was chosen, why, and what was measured."""

    chosen: Candidate
    reason: str
    fingerprint: str
    machine: dict[str, Any]
    measured: list[dict[str, Any]] = field(default_factory=list)
    reused: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "chosen": asdict(self.chosen),
            "label": self.chosen.label,
            "reason": self.reason,
            "reused": self.reused,
            "fingerprint": self.fingerprint,
            "machine": self.machine,
            "measured": self.measured,
        }


def machine() -> dict[str, Any]:
    """What makes one machine's fastest encoder differ from another's."""
    import torch

    info: dict[str, Any] = {
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "arch": platform.machine(),
    }
    if onnx_runtime.available():
        import onnxruntime

        info["onnxruntime"] = onnxruntime.__version__
    if openvino_runtime.available():
        import openvino

        info["openvino"] = openvino.__version__
    if torch.cuda.is_available():
        info["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        return info
    model, flags = platform.processor(), set()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and not model:
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    info["cpu"] = model
    info["flags"] = [f for f in CPU_FLAGS if f in flags]
    return info


def candidates(settings: EmbedSettings, cuda: bool) -> list[Candidate]:
    """Every combination of the settings left at auto (float32 first)."""
    if settings.dtype != "auto":
        dtypes = [settings.dtype]
    else:
        dtypes = ["float32", "bfloat16", "float16"] if cuda else ["float32", "bfloat16"]
    attentions = [settings.attention] if settings.attention != "auto" else ["sdpa", "eager"]
    if cuda and settings.attention == "auto":
        attentions = ["sdpa"]
    if settings.batch_tokens:
        budgets = [settings.batch_tokens]
    else:
        budgets = [GPU_BUDGET] if cuda else [CPU_BUDGET, 4 * CPU_BUDGET]
    int8 = settings.quantize == "int8" or (settings.quantize == "auto" and not cuda)
    out: list[Candidate] = []
    if settings.backend in ("auto", "torch"):
        out = [Candidate(d, a, b) for d in dtypes for a in attentions for b in budgets]
        if int8:
            more = [Candidate("float32", a, b, "int8") for a in attentions for b in budgets]
            out = more if settings.quantize == "int8" else out + more
    if cuda:
        return out
    onnx = settings.backend == "onnx" or (settings.backend == "auto" and onnx_runtime.available())
    if onnx and "float32" in dtypes:
        modes = ["int8"] if settings.quantize == "int8" else ["none"] + (["int8"] if int8 else [])
        out += [Candidate("float32", "eager", b, q, "onnx") for q in modes for b in budgets]
    vino = settings.backend == "openvino" or (
        settings.backend == "auto" and openvino_runtime.available()
    )
    if vino and settings.quantize != "int8":
        precisions = [d for d in dtypes if d in ("float32", "bfloat16")]
        out += [Candidate(d, "eager", b, "none", "openvino") for d in precisions for b in budgets]
    return out


def key_of(settings: EmbedSettings, info: dict[str, Any], options: list[Candidate]) -> str:
    """The fingerprint a stored calibration is kept under."""
    blob = {
        "machine": info,
        "model": settings.model,
        "device": settings.device,
        "candidates": [c.label for c in options],
        "floors": [settings.min_cosine, settings.min_overlap],
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()[:16]


def _timed(encoder: Encoder, texts: Sequence[str]) -> tuple[Any, float]:
    encoder.encode(texts[: min(8, len(texts))])  # warm-up: load, first kernels
    start = time.perf_counter()
    vectors = encoder.encode(texts)
    return vectors, time.perf_counter() - start


def measure(
    settings: EmbedSettings,
    options: list[Candidate],
    texts: Sequence[str],
    build: Callable[[Candidate], Encoder],
    reference: Any = None,
) -> tuple[Candidate, list[dict[str, Any]], Any]:
    """Time every candidate on ``texts``; the fastest that passes the floors against float32
    (``reference``, else the first float32 candidate's vectors, else a float32 run of its own),
    the rows measured, and the reference."""
    runs = [(c, *_timed(build(c), texts)) for c in options]
    if reference is None:
        plain = (
            v
            for c, v, _ in runs
            if c.dtype == "float32" and c.quantize == "none" and c.backend == "torch"
        )
        reference = next(plain, None)
    if reference is None:
        first = options[0]
        reference, _ = _timed(
            build(Candidate("float32", first.attention, first.batch_tokens)), texts
        )
    rows, best = [], None
    for candidate, vectors, seconds in runs:
        agree = agreement(reference, vectors)
        passed = agree.mean_cosine >= settings.min_cosine and agree.overlap >= settings.min_overlap
        rows.append(
            {
                "candidate": candidate.label,
                "seconds": round(seconds, 4),
                "texts_per_s": round(len(texts) / seconds, 1),
                "mean_cosine": round(agree.mean_cosine, 6),
                "top_k_overlap": round(agree.overlap, 4),
                "passed": passed,
            }
        )
        if passed and (best is None or seconds < best[1]):
            best = (candidate, seconds)
    if best is None:  # float32 agrees with itself: only floors above it can get here
        raise ValueError("no candidate passed the agreement floors against float32")
    return best[0], rows, reference


def search(
    settings: EmbedSettings,
    options: list[Candidate],
    texts: Sequence[str],
    build: Callable[[Candidate], Encoder],
) -> tuple[Candidate, list[dict[str, Any]]]:
    """Precision, attention and quantization at the first token budget, then the winner at the
    other budgets (timed again beside them): a handful of runs, not every combination."""
    budgets = list(dict.fromkeys(c.batch_tokens for c in options))
    first = [c for c in options if c.batch_tokens == budgets[0]]
    chosen, rows, reference = measure(settings, first, texts, build)
    if len(budgets) == 1:
        return chosen, rows
    again = [replace(chosen, batch_tokens=b) for b in budgets]
    chosen, more, _ = measure(settings, again, texts, build, reference)
    return chosen, rows + [{**row, "stage": 2} for row in more]


def calibrate(
    settings: EmbedSettings,
    texts: Sequence[str],
    total: int,
    *,
    cuda: bool,
    build: Callable[[Candidate], Encoder] | None = None,
    info: dict[str, Any] | None = None,
) -> Calibration:
    """The encoder configuration for this machine: stored, measured on ``texts`` (a sample of
    the job's ``total`` texts), or float32 when the job is too small to pay for measuring."""
    store = settings.calibration
    options = candidates(settings, cuda)
    info = info if info is not None else machine()
    key = key_of(settings, info, options)
    if len(options) == 1:
        return Calibration(options[0], "set explicitly in params.yaml", key, info)
    stored = json.loads(store.read_text("utf-8")) if store.is_file() else {}
    if key in stored:
        found = stored[key]
        return Calibration(
            Candidate(**found["chosen"]), found["reason"], key, info, found["measured"], True
        )
    if total < settings.calibrate_min_texts or len(texts) < 2:
        first = options[0]
        reason = (
            f"{total} texts, fewer than embed.calibrate_min_texts "
            f"({settings.calibrate_min_texts}): not measured, {first.label} (the reference)"
        )
        return Calibration(first, reason, key, info)
    sample = list(texts[: settings.calibrate_texts])

    def default_build(candidate: Candidate) -> Encoder:
        return build_encoder(settings, **candidate.options())

    chosen, rows = search(settings, options, sample, build or default_build)
    fastest = min(rows, key=lambda r: r["seconds"])
    reason = f"fastest of {len(options)} candidates passing the floors on {len(sample)} texts"
    if fastest["candidate"] != chosen.label:
        reason += f" ({fastest['candidate']} was faster but failed them)"
    result = Calibration(chosen, reason, key, info, rows)
    stored[key] = result.as_dict()
    store.parent.mkdir(parents=True, exist_ok=True)
    scratch = store.with_name(f".{store.name}.tmp-{os.getpid()}")
    scratch.write_text(json.dumps(stored, indent=1), "utf-8")
    os.replace(scratch, store)
    return result


def calibrated(settings: EmbedSettings, chunks: Path) -> tuple[EmbedSettings, dict[str, Any]]:
    """``settings`` with every auto choice made for this machine (:func:`calibrate`), and the
    calibration's record for ``stats.json``."""
    import torch

    cuda = settings.device == "cuda" or (settings.device == "auto" and torch.cuda.is_available())
    total = pq.ParquetFile(chunks).metadata.num_rows
    sample = next(read_blocks(chunks, settings.calibrate_texts, ["text"]), {"text": []})["text"]
    result = calibrate(settings, sample, total, cuda=cuda)
    return settings.model_copy(update=result.chosen.options()), result.as_dict()
