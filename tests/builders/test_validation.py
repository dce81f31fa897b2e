"""Labels from a reference panel's answers: LongBench Pro's difficulty cascade, solvable and
closed-book shares, drops under min_solvable, and the noise floor."""

from __future__ import annotations

from builders.validation import (
    CLOSED_BOOK,
    EVIDENCE,
    SHUFFLED,
    PanelAnswer,
    difficulty,
    distribution,
    label_items,
    model_failures,
    noise_floor,
    unlabelled,
    unsolvable,
)


def panel(scores: dict[str, list[float | None]], condition: str = EVIDENCE) -> list[PanelAnswer]:
    """One item's answers from five models per named tier (LongBench Pro's panel shape)."""
    return [
        PanelAnswer("lveval", "q1", f"{tier}-{k}", tier, condition, score, "" if score else "x")  # type: ignore[arg-type]
        for tier, given in scores.items()
        for k, score in enumerate(given)
    ]


RIGHT, WRONG = 1.0, 0.0


def test_the_cascade_is_longbench_pros_at_most_one_of_five() -> None:
    two_each = {t: [RIGHT, RIGHT, WRONG, WRONG, WRONG] for t in ("high", "mid", "low")}
    assert difficulty(panel(two_each), 0.65, 0.2) == "easy"
    assert difficulty(panel(two_each | {"low": [RIGHT] + [WRONG] * 4}), 0.65, 0.2) == "moderate"
    assert difficulty(panel(two_each | {"mid": [RIGHT] + [WRONG] * 4}), 0.65, 0.2) == "hard"
    # extreme wins over the lower tiers failing too: the cascade stops at the first failing tier
    assert difficulty(panel({t: [WRONG] * 5 for t in ("high", "mid", "low")}), 0.65, 0.2) == (
        "extreme"
    )
    # 0.64 is not correct at 0.65; 0.65 is
    assert difficulty(panel({"high": [0.64, 0.64, 0.65, 0.65, 0.65]}), 0.65, 0.2) == "easy"
    assert difficulty(panel({"high": [0.64, 0.64, 0.64, 0.64, 0.65]}), 0.65, 0.2) == "extreme"


def test_missing_tiers_are_skipped_and_failed_answers_are_not_wrong() -> None:
    assert difficulty(panel({"low": [WRONG, WRONG]}), 0.65, 0.2) == "moderate"
    assert difficulty(panel({"mid": [RIGHT]}), 0.65, 0.2) == "easy"
    # the one high model that failed is not counted: the high tier has no answer, mid decides
    answers = panel({"high": [None], "mid": [RIGHT, RIGHT]})
    assert difficulty(answers, 0.65, 0.2) == "easy"
    assert difficulty(panel({"high": [None]}), 0.65, 0.2) is None


def test_labels_share_solvable_and_closed_book_over_the_models_that_answered() -> None:
    answers = [
        *panel({"high": [RIGHT, 0.3, None]}),
        *panel({"high": [RIGHT, WRONG, WRONG]}, CLOSED_BOOK),
        *panel({"high": [RIGHT, RIGHT, RIGHT]}, SHUFFLED),
    ]
    (label,) = label_items(answers, 0.65, 0.2)
    assert label.solvable == 0.5 and label.answered == 2  # the failed ask is not a 0
    assert label.closed_book == 1 / 3
    assert label.failed == 1
    assert label.difficulty == "easy"  # 1 of 2 = 0.5 > 0.2
    assert unsolvable(label, 0.5) == ""
    assert unsolvable(label, 0.75) == (
        "unsolvable: 1 of 2 reference models answered correctly with the evidence "
        "(solvable 0.50 < min_solvable 0.75)"
    )
    assert unsolvable(label, 0.0) == ""


def test_an_item_no_model_answered_in_a_condition_is_dropped_as_unlabelled() -> None:
    (label,) = label_items(panel({"high": [None, None]}), 0.65, 0.2)
    assert (label.solvable, label.closed_book, label.difficulty) == (None, None, None)
    assert label.unanswered == (EVIDENCE,)
    assert unsolvable(label, 1.0) == ""
    assert unlabelled(label) == (
        "unlabelled: every evidence answer failed (2 failed asks, in the stage's "
        "llm_failures.parquet; a rerun asks them again)"
    )
    assert distribution([label]) == {"lveval": {"unlabelled": 1}}
    # answered with the evidence, but every closed-book ask failed: no closed_book to publish
    answers = [*panel({"high": [RIGHT, WRONG]}), *panel({"high": [None, None]}, CLOSED_BOOK)]
    (label,) = label_items(answers, 0.65, 0.2)
    assert label.solvable == 0.5 and label.closed_book is None
    assert unlabelled(label).startswith("unlabelled: every closed_book answer failed")
    # a condition never asked (closed-book outside LV-Eval) is no reason to drop
    (label,) = label_items(panel({"high": [RIGHT, None]}), 0.65, 0.2)
    assert label.closed_book is None and label.unanswered == () and unlabelled(label) == ""


def test_noise_floor_distribution_and_failures_per_model() -> None:
    answers = [
        PanelAnswer("lveval", "a", "m1", "high", SHUFFLED, 0.8),
        PanelAnswer("lveval", "b", "m1", "high", SHUFFLED, 0.1),
        PanelAnswer("lveval", "c", "m2", "low", SHUFFLED, None, "call_failed: 500"),
        PanelAnswer("summhay", "t/S1.1", "m1", "high", SHUFFLED, 0.0),
        PanelAnswer("lveval", "a", "m2", "low", EVIDENCE, None, "malformed: no JSON"),
    ]
    assert noise_floor(answers, 0.65) == {
        "lveval": {"answers": 2, "mean_score": 0.45, "correct_share": 0.5},
        "summhay": {"answers": 1, "mean_score": 0.0, "correct_share": 0.0},
    }
    assert model_failures(answers) == {
        "m1": {"answered": 3, "failed": 0},
        "m2": {"answered": 0, "failed": 2, "failed_call_failed": 1, "failed_malformed": 1},
    }
    labels = label_items(answers, 0.65, 0.2)
    assert [(la.item_id, la.difficulty) for la in labels] == [
        ("a", None),
        ("b", None),
        ("c", None),
        ("t/S1.1", None),
    ]


def test_difficulty_follows_the_full_context_answers_where_there_are_some() -> None:
    from builders.validation import FULL_CONTEXT

    answers = [*panel({"high": [RIGHT] * 5}), *panel({"high": [WRONG] * 5}, FULL_CONTEXT)]
    (label,) = label_items(answers, 0.65, 0.2)
    assert label.solvable == 1.0  # with the evidence alone, every model answers
    assert label.difficulty == "extreme"  # in the whole context, none does
