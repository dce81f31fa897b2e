"""ROUGE-L from the bit-parallel longest common subsequence equals rouge-score's own, on the
snapshot's article pages and on random texts with many repeats (where an LCS is easiest to get
wrong)."""

from __future__ import annotations

import itertools
import random

import pytest
from rouge_score import rouge_scorer

from benchsmith_scoring.leval.metrics import lcs_length, rouge
from tests.support.snapshot import ROOT

WORDS = ["a", "b", "c", "the", "of", "storm", "river", "flood", "2026", "running", "runs", "ran"]


def _theirs(prediction: str, reference: str, stem: bool) -> tuple[float, float, float]:
    scores = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=stem).score(
        reference, prediction
    )
    return scores["rouge1"].fmeasure, scores["rouge2"].fmeasure, scores["rougeL"].fmeasure


def test_lcs_length_equals_the_dynamic_programming_table() -> None:
    rng = random.Random(3)
    for _ in range(400):
        a = [rng.choice("abcd") for _ in range(rng.randint(0, 80))]
        b = [rng.choice("abcd") for _ in range(rng.randint(0, 80))]
        table = rouge_scorer._lcs_table(a, b)  # rouge-score's own table, the reference
        assert lcs_length(a, b) == (table[-1][-1] if a and b else 0)


@pytest.mark.parametrize("stem", [False, True])
def test_rouge_equals_rouge_score_on_random_texts(stem: bool) -> None:
    rng = random.Random(4)
    for _ in range(300):
        prediction = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 50)))
        reference = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 50)))
        ours = rouge(prediction, reference, stem=stem)
        assert (ours.rouge1, ours.rouge2, ours.rougeL) == _theirs(prediction, reference, stem)


def test_rouge_equals_rouge_score_on_real_articles() -> None:
    texts = (ROOT / "snapshot" / "wiki" / "export.xml").read_text("utf-8").split("<page>")
    texts = [t for t in texts if 50 < len(t.split()) < 700][:5]
    assert len(texts) >= 4
    for prediction, reference in itertools.pairwise(texts):
        for stem in (False, True):
            ours = rouge(prediction, reference, stem=stem)
            assert (ours.rouge1, ours.rouge2, ours.rougeL) == _theirs(prediction, reference, stem)
