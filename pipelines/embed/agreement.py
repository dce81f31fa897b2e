"""Agreement of a fast mode (bfloat16, float16, int8) with float32 on a sample.

Cosine between the two vectors of every text, and the overlap of each text's top-10 neighbours
among the sample. The embed stage refuses a mode below ``min_cosine`` / ``min_overlap``
(:func:`check_agreement`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipelines.embed.encoder import Encoder, build_encoder
from pipelines.embed.settings import EmbedSettings
from pipelines.errors import BenchsmithError


class AgreementError(BenchsmithError):
    """A fast embedding mode strays too far from float32."""


@dataclass(frozen=True)
class Agreement:
    """Mean and minimum cosine, and mean top-k neighbour overlap, over ``texts`` texts."""

    texts: int
    mean_cosine: float
    min_cosine: float
    top_k: int
    overlap: float

    def as_dict(self) -> dict[str, float | int]:
        return {
            "texts": self.texts,
            "mean_cosine": round(self.mean_cosine, 6),
            "min_cosine": round(self.min_cosine, 6),
            "top_k": self.top_k,
            "top_k_overlap": round(self.overlap, 4),
        }


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1, norms)


def _similarities(vectors: np.ndarray) -> np.ndarray:
    unit = _unit(vectors)
    sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)
    return sims


def neighbours(vectors: np.ndarray, k: int) -> np.ndarray:
    """Indices of each row's ``k`` most similar other rows (inner product of unit vectors)."""
    return np.argsort(-_similarities(vectors), axis=1, kind="stable")[:, :k]


TIE = 1e-3
"""Neighbours whose reference similarity is within this of the k-th one share its rank:
near-duplicate texts (two revisions of a page) tie, and their order is noise."""


def agreement(reference: np.ndarray, candidate: np.ndarray, k: int = 10) -> Agreement:
    """How closely ``candidate`` vectors follow ``reference`` vectors of the same texts.

    The top-k overlap counts a candidate neighbour as agreeing when its reference similarity
    reaches the reference's k-th neighbour (less :data:`TIE`).
    """
    if reference.shape != candidate.shape:
        raise ValueError(f"shapes differ: {reference.shape} and {candidate.shape}")
    cos = np.sum(_unit(reference) * _unit(candidate), axis=1)
    n = len(reference)
    k = min(k, n - 1)
    if k < 1:
        return Agreement(n, float(cos.mean()), float(cos.min()), 0, 1.0)
    sims = _similarities(reference)
    kth = -np.sort(-sims, axis=1)[:, k - 1]
    found = neighbours(candidate, k)
    agreeing = np.take_along_axis(sims, found, axis=1) >= (kth - TIE)[:, None]
    return Agreement(n, float(cos.mean()), float(cos.min()), k, float(agreeing.mean()))


def check_agreement(settings: EmbedSettings, encoder: Encoder, texts: list[str]) -> dict[str, Any]:
    """Compare ``encoder`` with float32 on ``texts``; raise below the floors."""
    plain = encoder.backend == "torch" and encoder.quantize == "none"
    if plain and encoder.precision == "float32":
        return {"mode": "float32", "checked": False}
    reference = build_encoder(settings, dtype="float32", quantize="none", backend="torch")
    result = agreement(reference.encode(texts), encoder.encode(texts))
    mode = encoder.quantize if encoder.quantize != "none" else encoder.precision
    mode = mode if encoder.backend == "torch" else f"{encoder.backend}-{mode}"
    if result.mean_cosine < settings.min_cosine or result.overlap < settings.min_overlap:
        raise AgreementError(
            f"embed mode {mode} agrees with float32 at mean cosine {result.mean_cosine:.5f} and "
            f"top-{result.top_k} overlap {result.overlap:.3f} on {result.texts} texts, below "
            f"embed.min_cosine {settings.min_cosine} / embed.min_overlap {settings.min_overlap}; "
            "use embed.dtype float32 and embed.quantize none, or lower the floors"
        )
    return {"mode": mode, "checked": True, **result.as_dict()}
