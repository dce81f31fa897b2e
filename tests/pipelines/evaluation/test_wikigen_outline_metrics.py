"""STORM's outline metrics: the soft-cardinality and entity-recall formulas on hand-checked
cases, STORM's heading cleaning, the stand-in tagger's rule, and the batch scorer on the real
packaged encoder."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from pipelines.embed.models import ModelError
from pipelines.evaluation.wikigen_heading_entities import (
    CapitalisedSpans,
    FlairTagger,
    entity_tagger,
)
from pipelines.evaluation.wikigen_outline_metrics import (
    OutlineScorer,
    heading_entity_recall,
    heading_soft_recall,
    soft_cardinality,
    storm_headings,
)
from pipelines.extras import installed

# three orthogonal headings, and a fourth at cosine 0.5 from "Background" (vectors unnormalised:
# the formula must not depend on their scale)
VECTORS = {
    "Background": np.array([2.0, 0.0, 0.0]),
    "Casualties": np.array([0.0, 3.0, 0.0]),
    "Response": np.array([0.0, 0.0, 0.5]),
    "Context": np.array([1.0, 3**0.5, 0.0]),
}


def encode(texts: Sequence[str]) -> np.ndarray:
    return np.stack([VECTORS[t] for t in texts])


def test_soft_cardinality_counts_near_duplicates_less_than_once_each() -> None:
    assert soft_cardinality(encode(["Background", "Casualties", "Response"])) == pytest.approx(3)
    # cosine 0.5: each row sums to 1.5, so the pair counts 2 / 1.5
    assert soft_cardinality(encode(["Background", "Context"])) == pytest.approx(4 / 3)


@pytest.mark.parametrize(
    ("reference", "predicted", "expected"),
    [
        (["Background", "Casualties"], ["Casualties", "Background"], 1.0),  # identical sets
        (["Background", "Casualties"], ["Response"], 0.0),  # disjoint, orthogonal
        (["Background", "Casualties"], ["Background"], 0.5),  # half recalled
        (["Background", "Casualties"], ["Background", "Background", "Background"], 0.5),
        # sets on both sides: card(G) = card(P) = 2, card(G | P) = 3
        (["Background", "Background", "Casualties"], ["Casualties", "Response", "Response"], 0.5),
        # cos 0.5: card(G) = card(P) = 1, card(G | P) = 4/3, so recall 2 - 4/3
        (["Background"], ["Context"], 2 / 3),
        (["Background", "Casualties"], [], 0.0),  # nothing predicted
        ([], [], 0.0),  # STORM checks the predicted side first
    ],
)
def test_heading_soft_recall_on_hand_checked_cases(
    reference: list[str], predicted: list[str], expected: float
) -> None:
    assert heading_soft_recall(reference, predicted, encode) == pytest.approx(expected, abs=1e-12)


def test_heading_soft_recall_is_undefined_without_reference_headings() -> None:
    with pytest.raises(ValueError, match="without reference headings"):
        heading_soft_recall([], ["Background"], encode)


def test_heading_soft_recall_encodes_each_distinct_heading_once() -> None:
    calls: list[list[str]] = []

    def counted(texts: Sequence[str]) -> np.ndarray:
        calls.append(list(texts))
        return encode(texts)

    heading_soft_recall(["Background", "Casualties"], ["Casualties", "Response"], counted)
    assert calls == [["Background", "Casualties", "Response"]]


def spans(heading: str) -> Iterator[str]:
    yield from CapitalisedSpans.runs(heading)


@pytest.mark.parametrize(
    ("reference", "predicted", "expected"),
    [
        (["Response in Japan", "Aid from Germany"], ["Aid from Germany", "Response in Japan"], 1.0),
        (["Response in Japan", "Aid from Germany"], ["Aid from Germany"], 0.5),
        (["Response in Japan"], ["Reaction in Canada"], 0.0),
        (["Response in Japan", "Japan and Germany"], ["Relief in Japan"], 0.5),  # a set of two
        (["Reaction of NATO"], ["NATO's answer"], 0.0),  # exact spans only
        (["Response in Japan"], ["Response In Japan"], 1.0),  # Title Case
        (["Background", "Aftermath"], ["Background"], 1.0),  # no reference entity: 1, as STORM
        (["Background", "Aftermath"], [], 1.0),
        (["Response in Japan"], [], 0.0),
        (["Response in Japan", ""], ["", "Relief in Japan"], 1.0),
    ],
)
def test_heading_entity_recall_on_hand_checked_cases(
    reference: list[str], predicted: list[str], expected: float
) -> None:
    assert heading_entity_recall(reference, predicted, spans) == expected


def test_heading_entity_recall_lowercases_the_spans_of_both_sides() -> None:
    tagged = {"Ref": ["Mount Etna"], "Pred": ["MOUNT ETNA"]}
    assert heading_entity_recall(["Ref"], ["Pred"], tagged.__getitem__) == 1.0


@pytest.mark.parametrize(
    ("headings", "kept"),
    [
        (["Background", "See also", "Legacy"], ["Background"]),
        (["## Background ", "# Response"], ["Background", "Response"]),
        (["Background", "Design notes", "Legacy"], ["Background"]),  # a substring, as STORM
        (["Background", "Notes and references"], ["Background"]),
        (["External Links"], []),
        (["Background", "", "Response"], ["Background", "Response"]),
    ],
)
def test_headings_are_cut_where_storms_get_sections_stops(
    headings: list[str], kept: list[str]
) -> None:
    assert storm_headings(headings) == kept


@pytest.mark.parametrize(
    ("heading", "found"),
    [
        ("Early life", []),  # a lone capitalised first word is sentence case
        ("France", []),  # ... so a one-name heading is a known miss
        ("United States response", ["United States"]),
        ("NATO response", ["NATO"]),
        ("Relations with the United States", ["United States"]),
        ("Battle Of Hastings", ["Hastings"]),  # linking words end a run in any case
        ("Reactions in Germany and France", ["Germany", "France"]),
        ("Apollo 11 landing", ["Apollo 11"]),
        ("2024 Summer Olympics", ["Summer Olympics"]),
        ("Aid to Paris, France.", ["Paris", "France"]),
        ("U.S. reaction", ["U.S."]),
    ],
)
def test_the_stand_in_tagger_finds_capitalised_runs(heading: str, found: list[str]) -> None:
    assert CapitalisedSpans().spans([heading]) == [found]


def test_an_unknown_tagger_is_named_with_the_choices() -> None:
    with pytest.raises(ValueError, match=r"'spacy'.*capitalised, flair"):
        entity_tagger("spacy")


@pytest.mark.skipif(installed("flair"), reason="flair is installed here")
def test_storms_flair_tagger_says_how_to_install_it() -> None:
    with pytest.raises(ModelError, match=r"pip install 'flair==0\.13\.0'"):
        FlairTagger()


@pytest.fixture(scope="module")
def scorer() -> OutlineScorer:
    return OutlineScorer()


REFERENCE = ["Background", "Earthquake", "Damage in Ohrid", "Response from Albania", "Aftermath"]


def test_the_scorer_gives_identical_outlines_full_marks_on_the_real_encoder(
    scorer: OutlineScorer,
) -> None:
    [same] = scorer.score([(REFERENCE, list(reversed(REFERENCE)))])
    assert same.soft_recall == pytest.approx(1.0, abs=1e-9)
    assert (same.entity_recall, same.status, same.reference_headings) == (1.0, "ok", 5)


def test_the_scorer_ranks_a_paraphrased_outline_above_an_unrelated_one(
    scorer: OutlineScorer,
) -> None:
    close = ["Background", "The quake", "Destruction in Ohrid", "Albanian rescue teams"]
    unrelated = ["Discography", "Personal life", "Awards and nominations"]
    near, far = scorer.score([(REFERENCE, close), (REFERENCE, unrelated)])
    assert near.soft_recall is not None and far.soft_recall is not None
    assert near.soft_recall > far.soft_recall + 0.2
    assert (near.entity_recall, far.entity_recall) == (0.5, 0.0)  # ohrid of {ohrid, albania}


def test_the_batch_equals_the_pure_functions_pair_by_pair(scorer: OutlineScorer) -> None:
    pairs = [
        (REFERENCE, ["Background", "Casualties", "Aftermath"]),
        (["Overview", "Response from Albania", "References", "Later"], ["Response", "Legacy"]),
    ]
    for result, (ref, pred) in zip(scorer.score(pairs), pairs, strict=True):
        ref, pred = storm_headings(ref), storm_headings(pred)
        assert result.soft_recall == pytest.approx(
            heading_soft_recall(ref, pred, scorer.encoder.embed), abs=1e-6
        )
        assert result.entity_recall == heading_entity_recall(ref, pred, spans)
        assert (result.reference_headings, result.predicted_headings) == (len(ref), len(pred))


def test_a_reference_without_headings_is_kept_with_its_reason(scorer: OutlineScorer) -> None:
    empty, scored = scorer.score([(["References", "External links"], ["Background"]), (["A"], [])])
    assert (empty.status, empty.soft_recall, empty.entity_recall) == (
        "no_reference_headings",
        None,
        None,
    )
    assert "no section heading" in empty.reason
    assert (scored.status, scored.soft_recall, scored.predicted_headings) == ("ok", 0.0, 0)


def test_the_scorer_labels_its_figures_with_the_models_used(scorer: OutlineScorer) -> None:
    assert scorer.labels == {
        "heading_encoder": "sentence-transformers/all-MiniLM-L6-v2",
        "heading_entities": "capitalised-spans (stand-in, not NER)",
    }
