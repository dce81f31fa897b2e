"""The encoder: texts in, vectors out, fast on CPU and GPU, in the caller's order.

- Texts are tokenized a block at a time (truncated to the encoder's maximum length), sorted by
  length and cut into token-budget batches, so padding stays small. Padded lengths are rounded
  up to a multiple of 16 (8 on GPU) and partial batches split into powers of two, so the model
  sees a bounded set of shapes; with blocks, memory stays flat in the number of texts.
- Worker threads pad the next batches into tensors (pinned memory on CUDA) while the model runs
  the current one; copies to the GPU are non-blocking.
- On CUDA every visible GPU holds a replica and pulls batches from one queue; on CPU the model
  uses every core. Vectors land at their texts' original positions.
- Precision: bfloat16 when unset (float16 on GPUs without bfloat16); the embed stage sets it, and
  attention, budget and backend, by calibration (:mod:`pipelines.embed.calibrate`). ``int8``
  quantizes linear layers dynamically (CPU).
- Backends: torch; ONNX Runtime and OpenVINO on CPU, from an ONNX export of the loaded model
  (:mod:`pipelines.embed.onnx_runtime`, :mod:`pipelines.embed.openvino_runtime`).
"""

from __future__ import annotations

import copy
import os
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipelines.embed.batching import padded_tokens, plan_batches, width_of
from pipelines.embed.models import ModelError, default_minilm, load_tokenizer
from pipelines.embed.onnx_runtime import OnnxModel, exported
from pipelines.embed.openvino_runtime import OpenVinoModel
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


_ALLOCATE = threading.Lock()


class _Output:
    """Vectors written by row as batches finish, at ``offset`` (the current block's first row);
    the array is made when the first batch tells its width."""

    def __init__(self, rows: int):
        self.rows = rows
        self.offset = 0
        self._array: np.ndarray | None = None

    def put(self, batch: list[int], vectors: np.ndarray) -> None:
        if self._array is None:
            with _ALLOCATE:  # GPU replicas may finish their first batches together
                if self._array is None:
                    self._array = np.empty((self.rows, vectors.shape[1]), dtype=np.float32)
        self._array[np.asarray(batch) + self.offset] = vectors

    @property
    def array(self) -> np.ndarray:
        assert self._array is not None
        return self._array


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
        block_texts: int = 512,
        multiple: int = 0,
        backend: str = "torch",
        onnx_cache: Path = Path(".cache/embeddings/onnx"),
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
        if backend == "onnx" and (cuda or dtype not in ("auto", "float32")):
            raise ModelError(
                "embed.backend onnx runs float32 (or quantize int8) on CPU; "
                f"got device {'cuda' if cuda else 'cpu'}, dtype {dtype}"
            )
        if backend == "openvino" and (cuda or quantize != "none" or dtype == "float16"):
            raise ModelError(
                "embed.backend openvino runs float32 or bfloat16 on CPU, without quantize; "
                f"got device {'cuda' if cuda else 'cpu'}, dtype {dtype}, quantize {quantize}"
            )
        self.backend = backend
        self.onnx_cache = onnx_cache
        self.quantize = quantize
        # the precision vectors are computed in; the weights transformers loads are float32 for
        # the exported backends (OpenVINO infers in ``precision`` itself)
        self.precision = "float32" if backend == "onnx" else self._dtype_name(dtype)
        self.dtype_name = "float32" if backend in ("onnx", "openvino") else self.precision
        self.dtype = getattr(torch, self.dtype_name)
        # auto: SDPA on CUDA; eager on CPU, about 10% faster there for short encoder inputs
        # (bench/embed.py, docs/performance.md)
        self.attention = attention if attention != "auto" else ("sdpa" if cuda else "eager")
        if backend in ("onnx", "openvino"):
            self.attention = "eager"  # what the export traces; the runtime fuses it
        self.batch_tokens = batch_tokens or (GPU_BUDGET if cuda else CPU_BUDGET)
        self.max_batch = max_batch
        self.block_texts = block_texts
        # padded lengths are rounded up to this, so the model sees a bounded set of shapes
        self.multiple = multiple or (8 if cuda else 16)
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
        if self.backend in ("onnx", "openvino"):
            pooled = self.spec.pooling == "pooler"
            identity = f"{self.spec.fingerprint()}:{source}:{architecture}"
            path = exported(model, source, identity, pooled, self.quantize, self.onnx_cache)
            if self.backend == "openvino":
                return [OpenVinoModel(path, pooled, self.precision, torch.get_num_threads())]
            return [OnnxModel(path, pooled, torch.get_num_threads())]
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
        """Identifies vectors: the spec plus precision, quantization and a backend other than
        torch."""
        extra = {"backend": self.backend} if self.backend != "torch" else {}
        return self.spec.fingerprint(dtype=self.precision, quantize=self.quantize, **extra)

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        """Float32 vectors of ``texts`` (``kind`` passage or query), one row per text."""
        return self.encode_with_stats(texts, kind)[0]

    def encode_with_stats(
        self, texts: Sequence[str], kind: str = "passage"
    ) -> tuple[np.ndarray, EncodeStats]:
        """Vectors and what it took: tokens, padding, batches.

        Texts are tokenized and batched ``block_texts`` at a time, so memory does not grow with
        the number of texts beyond the vectors themselves."""
        stats = EncodeStats(texts=len(texts))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32), stats
        query = kind == "query"
        prefix = self.spec.query_prefix if query else self.spec.passage_prefix
        tokenizer = self.query_tokenizer if query else self.tokenizer
        models = self.models(kind)
        out = _Output(len(texts))
        for start in range(0, len(texts), self.block_texts):
            block = texts[start : start + self.block_texts]
            ids = tokenizer(
                [prefix + t for t in block],
                truncation=True,
                max_length=self.spec.max_length,
                return_attention_mask=False,
                return_token_type_ids=False,
                verbose=False,
            )["input_ids"]
            lengths = [len(x) for x in ids]
            shape = (self.multiple, self.spec.max_length)
            batches = plan_batches(lengths, self.batch_tokens, self.max_batch, *shape)
            stats.tokens += sum(lengths)
            stats.batches += len(batches)
            stats.padded_tokens += padded_tokens(lengths, batches, *shape)
            out.offset = start  # blocks run one after another
            self._spread(models, tokenizer, ids, batches, out)
        return out.array, stats

    def _spread(
        self, models: list[Any], tokenizer: Any, ids: list[list[int]],
        batches: list[list[int]], out: _Output,
    ) -> None:  # fmt: skip
        """Run ``batches`` on one model, or on every GPU pulling from a shared queue."""
        if len(models) == 1:
            self._run(models[0], self.devices[0], tokenizer, ids, batches, out)
            return
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

    def _collate(self, tokenizer: Any, ids: list[list[int]], batch: list[int]) -> dict[str, Any]:
        """The batch as right-padded tensors, its width rounded up to ``multiple``."""
        longest = max(len(ids[i]) for i in batch)
        width = width_of(longest, self.multiple, self.spec.max_length)
        rows = np.full((len(batch), width), tokenizer.pad_token_id or 0, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, i in enumerate(batch):
            rows[row, : len(ids[i])] = ids[i]
            mask[row, : len(ids[i])] = 1
        torch = self.torch
        tensors = {"input_ids": torch.from_numpy(rows), "attention_mask": torch.from_numpy(mask)}
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
        out: _Output,
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
                    out.put(batch, vectors.float().cpu().numpy())

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
        "backend": "torch" if settings.backend == "auto" else settings.backend,
        "onnx_cache": settings.onnx_cache,
    } | overrides
    return Encoder(resolve(settings.model), **options)
