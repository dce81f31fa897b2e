"""The encoder: texts in, vectors out, fast on CPU and GPU, in the caller's order.

- Texts are tokenized once (truncated to the encoder's maximum length), sorted by length and
  cut into token-budget batches, so padding stays small and memory steady.
- Worker threads pad the next batches into tensors (pinned memory on CUDA) while the model runs
  the current one; copies to the GPU are non-blocking.
- On CUDA every visible GPU holds a replica and pulls batches from one queue; on CPU the model
  uses every core. Vectors land at their texts' original positions.
- Precision: bfloat16 by default (float16 on GPUs without bfloat16); attention SDPA on CUDA and
  eager on CPU by default; float32 and flash attention are settings. ``int8`` quantizes linear
  layers dynamically (CPU).
"""

from __future__ import annotations

import copy
import os
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipelines.embed.batching import padded_tokens, plan_batches
from pipelines.embed.models import ModelError, default_minilm, load_tokenizer
from pipelines.embed.registry import Architecture, EncoderSpec, resolve
from pipelines.embed.settings import EmbedSettings
from pipelines.hub_downloads import hint, local_only

CPU_BUDGET = 2048
GPU_BUDGET = 65536


@dataclass
class EncodeStats:
    """What one ``encode`` call did: texts, real tokens, padding share, batches."""

    texts: int = 0
    tokens: int = 0
    padded_tokens: int = 0
    batches: int = 0

    @property
    def padding(self) -> float:
        return 1 - self.tokens / self.padded_tokens if self.padded_tokens else 0.0

    def add(self, other: EncodeStats) -> None:
        self.texts += other.texts
        self.tokens += other.tokens
        self.padded_tokens += other.padded_tokens
        self.batches += other.batches


def _model_class(architecture: Architecture) -> Any:
    import transformers

    return {
        "auto": transformers.AutoModel,
        "t5-encoder": transformers.T5EncoderModel,
        "dpr-context": transformers.DPRContextEncoder,
        "dpr-question": transformers.DPRQuestionEncoder,
    }[architecture]


class Encoder:
    """Embed passages and queries with one :class:`EncoderSpec`."""

    def __init__(
        self,
        spec: EncoderSpec,
        *,
        device: str = "auto",
        dtype: str = "auto",
        attention: str = "auto",
        batch_tokens: int = 0,
        max_batch: int = 512,
        tokenizer_threads: int = 2,
        quantize: str = "none",
    ):
        import torch

        self.torch = torch
        self.spec = spec
        cuda = torch.cuda.is_available() if device == "auto" else device == "cuda"
        if cuda and not torch.cuda.is_available():
            raise ModelError("embed.device is cuda but no CUDA device is visible")
        self.devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if cuda else ["cpu"]
        self.cuda = cuda
        if quantize == "int8" and cuda:
            raise ModelError("quantize int8 is a CPU mode; use dtype bfloat16 or float16 on GPU")
        self.quantize = quantize
        self.dtype_name = self._dtype_name(dtype)
        self.dtype = getattr(torch, self.dtype_name)
        # auto: SDPA on CUDA; eager on CPU, about 10% faster there for short encoder inputs
        # (bench/embed.py, docs/performance.md)
        self.attention = attention if attention != "auto" else ("sdpa" if cuda else "eager")
        self.batch_tokens = batch_tokens or (GPU_BUDGET if cuda else CPU_BUDGET)
        self.max_batch = max_batch
        self.tokenizer_threads = tokenizer_threads
        if not cuda and "OMP_NUM_THREADS" not in os.environ:
            torch.set_num_threads(os.cpu_count() or 1)  # an explicit OMP_NUM_THREADS wins
        source = spec.model or default_minilm()
        try:
            self.tokenizer = load_tokenizer(source)
            self.query_tokenizer = (
                load_tokenizer(spec.query_model) if spec.query_model else self.tokenizer
            )
        except ModelError as exc:
            raise ModelError(f"encoder {spec.name!r}: {exc}") from None
        self._source = source
        self._models: dict[str, list[Any]] = {}

    def models(self, kind: str) -> list[Any]:
        """The replicas for ``kind`` (passage or query), loaded on first use."""
        spec = self.spec
        key = "query" if kind == "query" and spec.query_model else "passage"
        if key not in self._models:
            if key == "query":
                assert spec.query_model is not None
                self._models[key] = self._replicas(spec.query_model, spec.query_architecture)
            else:
                self._models[key] = self._replicas(self._source, spec.architecture)
        return self._models[key]

    def _dtype_name(self, dtype: str) -> str:
        if self.quantize == "int8":
            return "float32"  # dynamic quantization runs int8 kernels from float32 weights
        if dtype != "auto":
            return dtype
        if self.cuda and not self.torch.cuda.is_bf16_supported():
            return "float16"
        return "bfloat16"

    def _replicas(self, source: str, architecture: Architecture) -> list[Any]:
        torch = self.torch
        try:
            model = _model_class(architecture).from_pretrained(
                source,
                dtype=self.dtype,
                attn_implementation=self.attention,
                local_files_only=local_only(source),
            )
        except (OSError, ValueError) as exc:
            raise ModelError(
                f"cannot load encoder {self.spec.name!r} ({source}): {exc}{hint(source)}"
            ) from None
        model.eval()
        if self.quantize == "int8":
            model = torch.ao.quantization.quantize_dynamic(
                model, {torch.nn.Linear}, dtype=torch.qint8
            )
        if not self.cuda:
            return [model]
        # further GPUs get copies of the loaded weights, made before the first one moves
        copies = [copy.deepcopy(model).to(device) for device in self.devices[1:]]
        return [model.to(self.devices[0]), *copies]

    @property
    def name(self) -> str:
        """The encoder's name as recorded in outputs."""
        return self.spec.name

    def fingerprint(self) -> str:
        """Identifies vectors: the spec plus precision and quantization."""
        return self.spec.fingerprint(dtype=self.dtype_name, quantize=self.quantize)

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        """Float32 vectors of ``texts`` (``kind`` passage or query), one row per text."""
        return self.encode_with_stats(texts, kind)[0]

    def encode_with_stats(
        self, texts: Sequence[str], kind: str = "passage"
    ) -> tuple[np.ndarray, EncodeStats]:
        """Vectors and what it took: tokens, padding, batches."""
        stats = EncodeStats(texts=len(texts))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32), stats
        query = kind == "query"
        prefix = self.spec.query_prefix if query else self.spec.passage_prefix
        tokenizer = self.query_tokenizer if query else self.tokenizer
        models = self.models(kind)
        ids = tokenizer(
            [prefix + t for t in texts],
            truncation=True,
            max_length=self.spec.max_length,
            verbose=False,
        )["input_ids"]
        lengths = [len(x) for x in ids]
        batches = plan_batches(lengths, self.batch_tokens, self.max_batch)
        stats.tokens = sum(lengths)
        stats.batches = len(batches)
        stats.padded_tokens = padded_tokens(lengths, batches)
        out: list[np.ndarray | None] = [None] * len(texts)
        if len(models) == 1:
            self._run(models[0], self.devices[0], tokenizer, ids, batches, out)
        else:
            # each GPU pulls the next batch from a shared queue
            queue = deque(batches)
            lock = threading.Lock()

            def worker(model: Any, device: str) -> None:
                while True:
                    with lock:
                        if not queue:
                            return
                        mine = [queue.popleft() for _ in range(min(4, len(queue)))]
                    self._run(model, device, tokenizer, ids, mine, out)

            threads = [
                threading.Thread(target=worker, args=(m, d), daemon=True)
                for m, d in zip(models, self.devices, strict=True)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        return np.stack(out), stats  # type: ignore[arg-type]

    def _collate(self, tokenizer: Any, ids: list[list[int]], batch: list[int]) -> dict[str, Any]:
        padded = tokenizer.pad(
            {"input_ids": [ids[i] for i in batch]}, padding=True, return_tensors="pt"
        )
        tensors = {k: padded[k] for k in ("input_ids", "attention_mask")}
        if self.cuda:
            tensors = {k: v.pin_memory() for k, v in tensors.items()}
        return tensors

    def _run(
        self,
        model: Any,
        device: str,
        tokenizer: Any,
        ids: list[list[int]],
        batches: Sequence[list[int]],
        out: list[np.ndarray | None],
    ) -> None:
        torch = self.torch
        ahead = max(2, self.tokenizer_threads * 2)
        with ThreadPoolExecutor(self.tokenizer_threads, thread_name_prefix="collate") as pool:
            pending: deque[tuple[list[int], Future[dict[str, Any]]]] = deque()
            todo = iter(batches)
            for batch in todo:
                pending.append((batch, pool.submit(self._collate, tokenizer, ids, batch)))
                if len(pending) >= ahead:
                    break
            with torch.inference_mode():
                while pending:
                    batch, future = pending.popleft()
                    nxt = next(todo, None)
                    if nxt is not None:
                        pending.append((nxt, pool.submit(self._collate, tokenizer, ids, nxt)))
                    tensors = {
                        k: v.to(device, non_blocking=True) for k, v in future.result().items()
                    }
                    vectors = self._pool(model(**tensors), tensors["attention_mask"])
                    for row, i in zip(vectors.float().cpu().numpy(), batch, strict=True):
                        out[i] = row

    def _pool(self, output: Any, mask: Any) -> Any:
        torch = self.torch
        if self.spec.pooling == "pooler":
            pooled = output.pooler_output
        else:
            hidden = output.last_hidden_state
            if self.spec.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                weights = mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        pooled = pooled.float()
        if self.spec.normalize:
            pooled = torch.nn.functional.normalize(pooled, dim=-1)
        return pooled


def build_encoder(settings: EmbedSettings, **overrides: Any) -> Encoder:
    """The configured encoder (``overrides`` replace settings, e.g. ``dtype="float32"``)."""
    options = {
        "device": settings.device,
        "dtype": settings.dtype,
        "attention": settings.attention,
        "batch_tokens": settings.batch_tokens,
        "max_batch": settings.max_batch,
        "tokenizer_threads": settings.tokenizer_threads,
        "quantize": "none" if settings.quantize == "auto" else settings.quantize,
    } | overrides
    return Encoder(resolve(settings.model), **options)
