"""The ``chunk`` and ``embed`` settings."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, StrictInt, field_validator, model_validator

from builders.settings import Strict
from pipelines.extras import require
from pipelines.paths import ProjectPath


class RaySettings(Strict):
    """Where and how wide the Ray Data executor runs."""

    address: str | None = Field(
        None,
        description=(
            "Ray cluster to join, e.g. 'ray://head:10001' or 'auto'; unset: start a local "
            "one on this machine."
        ),
    )
    num_cpus: StrictInt | None = Field(None, gt=0, description="CPUs of a local cluster.")
    actors: StrictInt = Field(2, gt=0, description="Embedding actors (one GPU each on GPU nodes).")
    gpus_per_actor: float = Field(0, ge=0, description="0 on CPU nodes; 1 gives each actor a GPU.")
    cpus_per_actor: float = Field(
        0.5,
        gt=0,
        description=(
            "CPUs Ray reserves per CPU actor (its torch threads use every core regardless); "
            "actors must leave a CPU free for the tasks that read and feed them."
        ),
    )
    batch_rows: StrictInt = Field(1024, gt=0, description="Rows per Ray batch.")

    @model_validator(mode="after")
    def _room_to_read(self) -> RaySettings:
        reserved = 0 if self.gpus_per_actor else self.actors * self.cpus_per_actor
        if self.num_cpus is not None and reserved > self.num_cpus - 1:
            raise ValueError(
                f"{self.actors} actors x {self.cpus_per_actor} CPUs leave no CPU of num_cpus "
                f"{self.num_cpus} for reading, which would stall the pipeline; lower actors or "
                "cpus_per_actor"
            )
        return self


def _executor(value: str) -> str:
    if value == "ray":
        require("ray")
    return value


class ChunkSettings(Strict):
    """Documents become chunks of ``size`` words or tokens, overlapping by ``overlap``."""

    corpora: list[Literal["web", "summhay"]] = Field(
        default_factory=lambda: ["web"],
        description="web: the web stage's usable documents; summhay: haystack documents.",
    )
    size: StrictInt = Field(256, gt=0, description="Chunk length (WikiGenBench: 256 words).")
    overlap: StrictInt = Field(0, ge=0, description="Units shared by consecutive chunks.")
    unit: Literal["words", "tokens"] = Field(
        "words", description="What size and overlap count: words, or tokens of tokenizer."
    )
    tokenizer: str | None = Field(
        None, description="Tokenizer for unit 'tokens'; unset: the embed model's (MiniLM)."
    )
    executor: Literal["local", "ray"] = Field(
        "local", description="local: in this process; ray: Ray tasks over blocks of documents."
    )
    _ray_installed = field_validator("executor")(_executor)
    ray: RaySettings = Field(default_factory=RaySettings)

    @model_validator(mode="after")
    def _overlap_smaller(self) -> ChunkSettings:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


class EmbedSettings(Strict):
    """Which encoder embeds the chunks, on what, in what precision, and where vectors go."""

    model: str = Field(
        "minilm",
        description=(
            "An encoder of the registry (minilm, dpr, gtr, e5, bge) or a model folder / hub id "
            "embedded with mean pooling."
        ),
    )
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto: CUDA when present.")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto",
        description=(
            "auto: the fastest precision on this machine that agrees with float32, measured "
            "(pipelines/embed/calibrate.py)."
        ),
    )
    attention: Literal["auto", "sdpa", "eager", "flash_attention_2"] = Field(
        "auto",
        description="Attention implementation; auto: measured (SDPA on CUDA, eager on CPU).",
    )
    batch_tokens: StrictInt = Field(
        0,
        ge=0,
        description="Padded tokens per batch (length x rows); 0: 2,048 on CPU, 65,536 on GPU.",
    )
    max_batch: StrictInt = Field(512, gt=0, description="Most texts in one batch.")
    tokenizer_threads: StrictInt = Field(
        2, ge=1, description="Threads tokenizing ahead of the model."
    )
    quantize: Literal["none", "int8", "auto"] = Field(
        "none",
        description=(
            "int8: dynamic int8 linear layers on CPU, allowed only when a sample agrees with "
            "float32 (min_cosine, min_overlap); auto: a calibration candidate on CPU."
        ),
    )
    backend: Literal["auto", "torch", "onnx", "openvino"] = Field(
        "auto",
        description=(
            "torch; onnx (ONNX Runtime on CPU, pip install 'benchsmith[onnx]'); openvino "
            "(OpenVINO on CPU, pip install 'benchsmith[openvino]'); auto: calibration candidates "
            "where installed."
        ),
    )

    @field_validator("backend")
    @classmethod
    def _backend_installed(cls, value: str) -> str:
        if value in ("onnx", "openvino"):
            require(value)
        return value

    onnx_cache: ProjectPath = Field(
        Path(".cache/embeddings/onnx"),
        description="Models exported to ONNX (for onnx and openvino), reused across runs.",
    )
    calibrate_texts: StrictInt = Field(
        96, ge=8, description="Texts each calibration candidate embeds (timed after a warm-up)."
    )
    calibrate_min_texts: StrictInt = Field(
        1000,
        ge=0,
        description=(
            "Fewer chunks than this, with no stored calibration for the machine: float32, "
            "unmeasured (a calibration would cost more than it saves)."
        ),
    )
    calibration: ProjectPath = Field(
        Path(".cache/embeddings/calibration.json"),
        description="Calibrations by machine fingerprint; a changed machine measures again.",
    )
    min_cosine: float = Field(0.999, gt=0, le=1, description="Agreement floor for quantize.")
    min_overlap: float = Field(0.99, gt=0, le=1, description="Top-10 overlap floor for quantize.")
    block_rows: StrictInt = Field(
        4096, gt=0, description="Texts per block; each finished block is kept in the cache."
    )
    agreement_sample: StrictInt = Field(
        256, ge=0, description="Texts compared with float32 before a fast mode runs; 0: none."
    )
    vector_dtype: Literal["float16", "float32"] = Field(
        "float16", description="Precision of the stored vectors."
    )
    faiss: bool = Field(False, description="Also write a FAISS inner-product index.")

    @field_validator("faiss")
    @classmethod
    def _faiss_installed(cls, value: bool) -> bool:
        if value:
            require("faiss")
        return value

    cache: ProjectPath = Field(
        Path(".cache/embeddings/vectors.sqlite"),
        description="Embedding cache by model and text hash; survives dvc repro.",
    )
    executor: Literal["local", "ray"] = Field(
        "local", description="local: this machine; ray: a pool of encoder actors (Ray Data)."
    )
    _ray_installed = field_validator("executor")(_executor)
    ray: RaySettings = Field(default_factory=RaySettings)
