"""STORM's outline metrics: heading soft recall and heading entity recall.

Both compare a generated article's headings with its reference article's, as STORM's ``eval/``
computes them (stanford-oval/storm at :data:`STORM_COMMIT`, the last commit of ``main`` that
holds ``eval/``, whose two files are the same on the ``NAACL-2024-code-backup`` branch:
``eval/metrics.py`` for ``card``, ``heading_soft_recall``, ``extract_entities_from_list`` and
``heading_entity_recall``; ``eval/eval_outline_quality.py`` for ``get_sections``).

- **Heading soft recall** (soft cardinality; STORM's docstring cites ScienceDirect article
  S0167865523000296): every heading is embedded, and a set's cardinality is
  ``sum_i 1 / sum_j cos(h_i, h_j)``, so near-synonymous headings count once together. Recall is
  ``(card(G) + card(P) - card(G | P)) / card(G)`` over the distinct reference headings ``G`` and
  predicted headings ``P``; 0 when ``P`` is empty. It is not bounded by 1 (a paraphrased outline
  can score a little above it). STORM embeds
  with ``paraphrase-MiniLM-L6-v2``; here the encoder is a setting, all-MiniLM-L6-v2 by default,
  and figures are labelled with the model that made them.
- **Heading entity recall:** the named entities of all reference headings and of all predicted
  headings, lowercased, as two sets; recall is ``|G & P| / |G|``, and 1 when the reference
  headings hold no entity. STORM tags with flair's ``ner`` model
  (:mod:`pipelines.evaluation.wikigen_heading_entities` holds it and the offline stand-in).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

STORM_COMMIT = "3328c979e2c3928724dc0bfca3b9f87f64988cda"
"""The commit of stanford-oval/storm whose ``eval/`` these metrics follow (the paper's code)."""

STOP_KEYWORDS = ("references", "external links", "see also", "notes")
"""STORM's ``get_sections`` stops at the first heading whose lower case contains one of these."""

Encode = Callable[[Sequence[str]], np.ndarray]
"""Texts in, one vector per text out (any scale: cosine similarity normalises)."""

Entities = Callable[[str], Iterable[str]]
"""The entity spans of one heading, as the tagger wrote them."""


def storm_headings(headings: Iterable[str]) -> list[str]:
    """Headings as STORM's ``get_sections`` keeps them: stripped of ``#`` and spaces, cut at the
    first one whose lower case contains a :data:`STOP_KEYWORDS` entry (that one and all after
    it are dropped, e.g. "Notes and references", but also "Design notes"). Empty headings are
    dropped; the text is otherwise kept as written."""
    kept: list[str] = []
    for heading in headings:
        heading = heading.strip().strip("#").strip()
        if any(word in heading.lower() for word in STOP_KEYWORDS):
            break
        if heading:
            kept.append(heading)
    return kept


def soft_cardinality(vectors: np.ndarray) -> float:
    """``sum_i 1 / sum_j cos(v_i, v_j)`` over the rows of ``vectors``, in float64 (STORM's
    ``card``: scikit-learn's ``cosine_similarity``, which leaves a zero row at zero)."""
    rows = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = rows / np.where(norms == 0, 1.0, norms)
    return float((1.0 / (unit @ unit.T).sum(axis=1)).sum())


def heading_soft_recall(
    reference_headings: Sequence[str], predicted_headings: Sequence[str], encode: Encode
) -> float:
    """STORM's heading soft recall of ``predicted_headings`` against ``reference_headings``.

    Duplicates count once (STORM takes sets). 0.0 when nothing is predicted (STORM checks that
    first); a ``ValueError`` when there is no reference heading, where the recall is undefined
    (STORM's ``card`` fails on the empty set). Every distinct heading is encoded once, in one
    ``encode`` call."""
    golden = list(dict.fromkeys(reference_headings))
    predicted = list(dict.fromkeys(predicted_headings))
    if not predicted:
        return 0.0
    if not golden:
        raise ValueError("heading soft recall is undefined without reference headings")
    union = list(dict.fromkeys(golden + predicted))
    vectors = np.asarray(encode(union), dtype=np.float64)
    row = {heading: i for i, heading in enumerate(union)}
    card_g = soft_cardinality(vectors[: len(golden)])
    card_p = soft_cardinality(vectors[[row[h] for h in predicted]])
    return (card_g + card_p - soft_cardinality(vectors)) / card_g


def heading_entities(headings: Iterable[str], entities: Entities) -> set[str]:
    """The lowercased entity spans of every non-empty heading, as one set (STORM's
    ``extract_entities_from_list``)."""
    return {span.lower() for heading in headings if heading for span in entities(heading)}


def heading_entity_recall(
    reference_headings: Sequence[str], predicted_headings: Sequence[str], entities: Entities
) -> float:
    """STORM's heading entity recall: the share of the reference headings' entities that the
    predicted headings name too (exact match after lowercasing); 1.0 when the reference
    headings hold no entity, as in STORM."""
    golden = heading_entities(reference_headings, entities)
    if not golden:
        return 1.0
    return len(golden & heading_entities(predicted_headings, entities)) / len(golden)


@dataclass(frozen=True)
class OutlineScores:
    """One generated article's outline metrics (``None`` when not computed, with why)."""

    soft_recall: float | None
    entity_recall: float | None
    reference_headings: int
    predicted_headings: int
    status: str = "ok"
    """``ok``, or ``no_reference_headings`` when the reference keeps no heading."""
    reason: str = ""


class OutlineScorer:
    """Scores many generated articles' headings against their references in one batch: every
    distinct heading is embedded once and tagged once.

    ``model``: an encoder of the embed registry or a model folder / hub id (``None``: the
    packaged all-MiniLM-L6-v2; STORM's is ``sentence-transformers/paraphrase-MiniLM-L6-v2``).
    ``entities``: a tagger of :data:`pipelines.evaluation.wikigen_heading_entities.TAGGERS`."""

    def __init__(self, model: str | None = None, entities: str = "capitalised"):
        from pipelines.embed.models import display_name
        from pipelines.evaluation.wikigen_heading_entities import entity_tagger
        from pipelines.retrieval.dense import shared_scorer

        self.tagger = entity_tagger(entities)
        self.encoder = shared_scorer(model)
        self.labels = {"heading_encoder": display_name(model), "heading_entities": self.tagger.name}
        """What made the figures, to record beside them."""

    def score(self, pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> list[OutlineScores]:
        """The scores of each ``(reference_headings, predicted_headings)`` pair, in order. Both
        sides are cleaned as STORM's ``get_sections`` does (:func:`storm_headings`); a pair
        whose reference keeps no heading is kept with status ``no_reference_headings``."""
        cleaned = [(storm_headings(ref), storm_headings(pred)) for ref, pred in pairs]
        distinct = list(dict.fromkeys(h for ref, pred in cleaned for h in (*ref, *pred)))
        vectors = dict(zip(distinct, self.encoder.embed(distinct), strict=True)) if distinct else {}
        spans = dict(zip(distinct, self.tagger.spans(distinct), strict=True))

        def encode(texts: Sequence[str]) -> np.ndarray:
            return np.stack([vectors[t] for t in texts])

        return [self._one(ref, pred, encode, spans.__getitem__) for ref, pred in cleaned]

    @staticmethod
    def _one(ref: list[str], pred: list[str], encode: Encode, entities: Entities) -> OutlineScores:
        if not ref:
            return OutlineScores(
                None, None, 0, len(pred), "no_reference_headings",
                "the reference article keeps no section heading to recall",
            )  # fmt: skip
        return OutlineScores(
            heading_soft_recall(ref, pred, encode),
            heading_entity_recall(ref, pred, entities),
            len(ref),
            len(pred),
        )
