"""LV-Eval's AK metric in both modes, on hand-worked cases."""

from __future__ import annotations

import pytest

from benchsmith_scoring.lveval import (
    BLACKLIST_EN,
    BLACKLIST_ZH,
    THRESHOLDS,
    AKResult,
    ak_score,
)
from builders.text import normalize_en, text_length, token_f1, tokens

MODES = ("readme", "reference_code")


def test_normalize_en_drops_punctuation_articles_and_extra_space() -> None:
    # lower-case; "," ";" "-" "!" vanish (so "Ilse-Marten" joins); "The", "the", "an", "a" go
    assert (
        normalize_en("The President, of the Council;  was an Ilse-Marten!  a")
        == "president of council was ilsemarten"
    )
    # articles only as whole words: "theatre" and "another" stay
    assert normalize_en("A theatre, another one.") == "theatre another one"
    assert tokens("An apple a day", "en") == ["apple", "day"]


def test_blacklists_and_thresholds() -> None:
    assert len(BLACKLIST_EN) == 38
    assert {"and", "does", "which", "because"} <= BLACKLIST_EN
    # articles are removed by normalisation, not by the blacklist
    assert "the" not in BLACKLIST_EN and "a" not in BLACKLIST_EN
    assert len(BLACKLIST_ZH) == 85
    assert {"的", "是", "亿元", "c", "度"} <= BLACKLIST_ZH
    assert THRESHOLDS == {"en": 0.2, "zh": 0.4}


def test_token_f1_uses_multiset_overlap() -> None:
    # overlap: "x" once (min(2, 1)), "y" once -> 2; P = 2/3, R = 2/3 -> F1 = 2/3
    assert token_f1(["x", "x", "y"], ["x", "y", "z"]) == pytest.approx(2 / 3)
    assert token_f1([], ["x"]) == 0.0
    assert token_f1(["x"], []) == 0.0
    assert token_f1(["x"], ["y"]) == 0.0


def test_blacklist_in_f1_separates_the_modes() -> None:
    answers = ["the president of the council was Ilse Marten"]
    # gate in both modes: keywords "ilse marten" both present -> recall 1.0
    # reference_code: ref tokens "president of council was ilse marten" (6), pred "ilse marten"
    #   overlap 2: P = 1, R = 2/6 -> F1 = 2 * 1 * 1/3 / (4/3) = 0.5
    code = ak_score("Ilse Marten", answers, "Ilse Marten", mode="reference_code")
    assert code == AKResult(pytest.approx(0.5), 1.0, True, 0, 2)
    # readme: "of" and "was" are blacklisted -> ref "president council ilse marten" (4)
    #   overlap 2: P = 1, R = 1/2 -> F1 = 2 * 0.5 / 1.5 = 2/3
    readme = ak_score("Ilse Marten", answers, "Ilse Marten", mode="readme")
    assert readme == AKResult(pytest.approx(2 / 3), 1.0, True, 0, 2)


def test_reference_code_scores_only_the_first_answer() -> None:
    answers = ["Marten", "Ilse Marten"]
    # reference_code: F1("ilse marten", "marten") -> P = 1/2, R = 1 -> 2/3, always answer 0
    code = ak_score("Ilse Marten", answers, "Marten", mode="reference_code")
    assert code.score == pytest.approx(2 / 3)
    assert code.best_answer == 0
    # readme: answer 0 -> 2/3, answer 1 -> 1.0; the best is answer 1
    readme = ak_score("Ilse Marten", answers, "Marten", mode="readme")
    assert readme.score == pytest.approx(1.0)
    assert readme.best_answer == 1


@pytest.mark.parametrize("mode", MODES)
def test_gate_failure_scores_zero_in_both_modes(mode: str) -> None:
    # keywords "ilse marten": neither word in the prediction -> recall 0 < 0.2
    result = ak_score("The council chair was Rolf Berg", ["Ilse Marten"], "Ilse Marten", mode=mode)
    assert result == AKResult(0.0, 0.0, False, -1, 6)


def test_gate_denominator_counts_blacklisted_keywords_only_in_reference_code() -> None:
    keywords = "Ilse, who was in the council with her"
    # keyword tokens: ilse who was in council with her (7); not blacklisted: ilse, council (2)
    # reference_code: overlap {ilse} = 1 -> recall 1/7 ~ 0.143 < 0.2 -> 0
    code = ak_score("Ilse", ["Ilse"], keywords, mode="reference_code")
    assert code.gate_recall == pytest.approx(1 / 7)
    assert (code.score, code.gate_passed, code.best_answer) == (0.0, False, -1)
    # readme: recall 1/2 = 0.5 >= 0.2 -> F1("ilse", "ilse") = 1
    readme = ak_score("Ilse", ["Ilse"], keywords, mode="readme")
    assert readme == AKResult(1.0, 0.5, True, 0, 1)


def test_keywords_made_only_of_blacklisted_words() -> None:
    # keyword tokens "what is it", all blacklisted
    # reference_code: the overlap drops them all -> 0/3 -> gate fails
    code = ak_score("it is what it is", ["what is it"], "What is it?", mode="reference_code")
    assert (code.score, code.gate_recall, code.gate_passed) == (0.0, 0.0, False)
    # readme: no content keyword left -> falls back to all three -> recall 3/3; the answer is
    # also all blacklisted, so F1 compares as is: pred 5 tokens, ref 3, overlap 3
    #   P = 3/5, R = 1 -> F1 = 2 * 0.6 / 1.6 = 0.75
    readme = ak_score("it is what it is", ["what is it"], "What is it?", mode="readme")
    assert readme == AKResult(pytest.approx(0.75), 1.0, True, 0, 5)


def test_english_item_without_keywords() -> None:
    # reference_code: no gate at all; F1("berlin", "ilse marten") = 0
    code = ak_score("Berlin", ["Ilse Marten"], None, mode="reference_code")
    assert code == AKResult(0.0, None, True, 0, 1)
    # readme: each answer is its own gate; recall 0 -> fails
    readme = ak_score("Berlin", ["Ilse Marten"], "", mode="readme")
    assert readme == AKResult(0.0, 0.0, False, -1, 1)
    # readme: answer 0 fails its gate (recall 0), answer 1 passes (recall 1) and scores 1
    both = ak_score("Ilse Marten", ["Rolf Berg", "Ilse Marten"], None, mode="readme")
    assert both == AKResult(1.0, 1.0, True, 1, 2)


def test_chinese_tokens_drop_punctuation() -> None:
    assert tokens("我认为答案是：上海！", "zh") == ["我", "认为", "答案", "是", "上海"]
    assert tokens("北京是中国的首都", "zh") == ["北京", "是", "中国", "的", "首都"]


def test_chinese_without_keywords_in_both_modes() -> None:
    answers = ["北京是中国的首都"]  # 北京 / 是 / 中国 / 的 / 首都
    prediction = "首都是北京"  # 首都 / 是 / 北京; 5 characters
    # reference_code: keywords = answers[0] (5 tokens); overlap 首都, 是, 北京 minus 是 -> 2
    #   recall 2/5 = 0.4 >= 0.4; F1 with all tokens: overlap 3, P = 3/3, R = 3/5 -> 0.75
    code = ak_score(prediction, answers, None, language="zh", mode="reference_code")
    assert code == AKResult(pytest.approx(0.75), pytest.approx(0.4), True, 0, 5)
    # readme: content keywords 北京, 中国, 首都 -> recall 2/3; F1 without 是/的:
    #   pred 首都 北京 vs 北京 中国 首都 -> P = 1, R = 2/3 -> 0.8
    readme = ak_score(prediction, answers, None, language="zh", mode="readme")
    assert readme == AKResult(pytest.approx(0.8), pytest.approx(2 / 3), True, 0, 5)


def test_chinese_threshold_is_stricter() -> None:
    answers = ["北京是中国的首都"]
    # "北京": reference_code recall 1/5 = 0.2, readme 1/3; both below 0.4 -> 0
    for mode in MODES:
        result = ak_score("北京", answers, None, language="zh", mode=mode)
        assert (result.score, result.gate_passed) == (0.0, False)
    # with the English threshold 0.2 reference_code passes: F1 P = 1, R = 1/5 -> 1/3
    loose = ak_score("北京", answers, None, language="zh", mode="reference_code", threshold=0.2)
    assert loose.score == pytest.approx(1 / 3)


def test_chinese_with_keywords() -> None:
    # keywords 首都 found -> recall 1 in both modes; prediction 北京 / 是 / 首都 (6 characters)
    # reference_code F1: overlap 3, P = 1, R = 3/5 -> 0.75
    # readme F1: 北京 首都 vs 北京 中国 首都 -> P = 1, R = 2/3 -> 0.8
    expected = {"reference_code": 0.75, "readme": 0.8}
    for mode, score in expected.items():
        result = ak_score("北京是首都。", ["北京是中国的首都"], "首都", language="zh", mode=mode)
        assert result == AKResult(pytest.approx(score), 1.0, True, 0, 6)


def test_prediction_words() -> None:
    assert ak_score("Ilse  Marten, obviously.", ["x"], None).prediction_words == 3
    # characters without whitespace: 中国的首都 (5) + 是北京。 (4)
    assert ak_score("中国的首都 是北京。", ["北京"], None, language="zh").prediction_words == 9
    assert text_length(" a  bc ", "characters") == 3


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="language"):
        ak_score("x", ["x"], None, language="fr")
    with pytest.raises(ValueError, match="answer"):
        ak_score("x", [], None)
    with pytest.raises(ValueError, match="mode"):
        ak_score("x", ["x"], None, mode="paper")  # type: ignore[arg-type]
