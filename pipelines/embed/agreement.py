"""Agreement of a fast mode (bfloat16, float16, int8) with float32 on a sample.

Cosine between the two vectors of every text, and the overlap of each text's top-10 neighbours
among the sample. The embed stage refuses a mode below ``min_cosine`` / ``min_overlap``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
