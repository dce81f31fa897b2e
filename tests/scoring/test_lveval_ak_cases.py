"""AK on the hand-worked cases of docs/metrics.md, section "LV-Eval", in both modes.

Each expected value was worked out by hand from LV-Eval's public code (``metrics.py``
``qa_f1_score_with_gold_ans`` / ``qa_f1_zh_score_with_gold_ans``, ``evaluation.py`` ``scorer``,
``infinigence/LVEval`` at ``63e7ae9``) for ``reference_code``, and from its README's description
for ``readme``. English tokens: lower case, ASCII punctuation and a/an/the removed, split on
spaces. Chinese tokens: jieba segments, each lower-cased and without punctuation, empty ones
dropped. A ``None`` recall means that no gate ran.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from benchsmith_scoring.lveval import AKResult, ak_score


class Case(NamedTuple):
    prediction: str
    answers: tuple[str, ...]
    keywords: str | None
    language: str
    # (score, gate recall, gate passed, answer index) per mode
    code: tuple[float, float | None, bool, int]
    readme: tuple[float, float | None, bool, int]
    length: int  # words (en) or characters without whitespace (zh)


CASES: dict[str, Case] = {
    # "ILSE MARTEN!" -> ilse marten: keywords 2/2, F1 1 (case and "!" do not matter)
    "en_case_and_punctuation": Case(
        "ILSE MARTEN!", ("Ilse Marten",), "Ilse Marten", "en",
        code=(1.0, 1.0, True, 0), readme=(1.0, 1.0, True, 0), length=2,
    ),
    # "-" is removed, not a space: ilsemarten matches neither keyword -> 0/2 < 0.2
    "en_hyphen_joins_words": Case(
        "ILSE-MARTEN.", ("Ilse Marten",), "Ilse Marten", "en",
        code=(0.0, 0.0, False, -1), readme=(0.0, 0.0, False, -1), length=1,
    ),
    # U+2019 is not ASCII punctuation: "marten\u2019s" != "martens"; keywords 1/2 = 0.5;
    # F1 overlap 1 (book), P = R = 1/2 -> 0.5
    "en_curly_apostrophe": Case(
        "Marten\u2019s book", ("Marten's book",), "Marten's book", "en",
        code=(0.5, 0.5, True, 0), readme=(0.5, 0.5, True, 0), length=2,
    ),
    # keywords "2019" missing -> recall 0 -> 0 (plain F1 would be 4/7)
    "en_failed_gate": Case(
        "Marten never published her books online.",
        ("Marten began publishing her books online in 2019.",), "2019", "en",
        code=(0.0, 0.0, False, -1), readme=(0.0, 0.0, False, -1), length=6,
    ),
    # gate 1/1. code: pred marten published them in 2019 (5) vs marten published her books in
    # 2019 (6), overlap 4 -> P 4/5, R 4/6 -> 8/11. readme drops "her", "in": marten published
    # them 2019 vs marten published books 2019, overlap 3 -> P = R = 3/4 -> 3/4
    "en_blacklisted_words_in_answer": Case(
        "Marten published them in 2019", ("Marten published her books in 2019.",), "2019", "en",
        code=(8 / 11, 1.0, True, 0), readme=(0.75, 1.0, True, 0), length=5,
    ),
    # keywords it was because of war (5), all but "war" blacklisted. code: 1/5 = 0.2, not below
    # 0.2 -> passes; F1 war vs the 5 answer tokens -> P 1, R 1/5 -> 1/3. readme: recall 1/1;
    # F1 war vs war -> 1
    "en_gate_at_threshold": Case(
        "War.", ("It was because of the war.",), "It was because of the war", "en",
        code=(1 / 3, 0.2, True, 0), readme=(1.0, 1.0, True, 0), length=1,
    ),
    # keywords he was at war with his brother (7); "his" is in the prediction but blacklisted.
    # code: 1/7 < 0.2 -> 0. readme: content keywords war, brother -> 1/2; F1 brother vs
    # war brother -> P 1, R 1/2 -> 2/3
    "en_blacklisted_keywords_in_denominator": Case(
        "His brother.", ("He was at the war with his brother.",),
        "he was at the war with his brother", "en",
        code=(0.0, 1 / 7, False, -1), readme=(2 / 3, 0.5, True, 0), length=2,
    ),
    # pred dr marten chair (3). code, answers[0] ilse marten: P 1/3, R 1/2 -> 0.4.
    # readme, best answer: dr ilse marten chair -> overlap 3, P 1, R 3/4 -> 6/7
    "en_several_answers": Case(
        "Dr. Marten, the chair", ("Ilse Marten", "Dr. Ilse Marten, the chair"), "Marten", "en",
        code=(0.4, 1.0, True, 0), readme=(6 / 7, 1.0, True, 1), length=4,
    ),
    # no keywords. code: no gate; berlin in 1990 vs in berlin -> P 2/3, R 1 -> 0.8.
    # readme: the answer is its own gate (content keyword berlin, 1/1); F1 without "in":
    # berlin 1990 vs berlin -> P 1/2, R 1 -> 2/3
    "en_without_keywords": Case(
        "Berlin, in 1990", ("In Berlin",), None, "en",
        code=(0.8, None, True, 0), readme=(2 / 3, 1.0, True, 0), length=3,
    ),
    # keywords "The" normalise to nothing: LV-Eval's code divides by zero; ours runs no gate.
    # F1 marten vs ilse marten -> P 1, R 1/2 -> 2/3 in both modes
    "en_keywords_only_an_article": Case(
        "Marten", ("Ilse Marten",), "The", "en",
        code=(2 / 3, None, True, 0), readme=(2 / 3, None, True, 0), length=1,
    ),
    # jieba: 老师 是 张明 (。 dropped) vs 她 的 老师 是 张明; keywords 张明 1/1.
    # code: overlap 3 -> P 1, R 3/5 -> 0.75. readme drops 的, 是: 老师 张明 vs 她 老师 张明 -> 0.8
    "zh_blacklisted_words_in_answer": Case(
        "老师是张明。", ("她的老师是张明",), "张明", "zh",
        code=(0.75, 1.0, True, 0), readme=(0.8, 1.0, True, 0), length=6,
    ),
    # keywords 三 本书 2/2. answer 他 在 2019 年 出版 了 三 本书 (8), pred 他 出版 了 三 本书 (5).
    # code: overlap 5 -> P 1, R 5/8 -> 10/13. readme drops 在, 年, 了: 他 出版 三 本书 vs
    # 他 2019 出版 三 本书 -> P 1, R 4/5 -> 8/9
    "zh_segmented_numbers": Case(
        "他出版了三本书", ("他在2019年出版了三本书。",), "三本书", "zh",
        code=(10 / 13, 1.0, True, 0), readme=(8 / 9, 1.0, True, 0), length=7,
    ),
    # keywords 张明 和 李华 (3), 和 blacklisted. code: 1/3 < 0.4 -> 0. readme: content
    # 张明 李华 -> 1/2 >= 0.4; F1 张明 vs 张明 李华 -> 2/3
    "zh_threshold_and_blacklisted_keyword": Case(
        "张明", ("张明和李华",), "张明和李华", "zh",
        code=(0.0, 1 / 3, False, -1), readme=(2 / 3, 0.5, True, 0), length=2,
    ),
    # no keywords. code: answers[0] is the gate: 由 张明 主持 的 会议, no overlap -> 0.
    # readme: answer 0's content keywords 张明 主持 会议 -> 0 (fails); answer 1's 张明 李华 ->
    # 1/2 passes; F1 李华 vs 张明 李华 -> 2/3
    "zh_several_answers_without_keywords": Case(
        "李华", ("由张明主持的会议", "张明和李华"), "", "zh",
        code=(0.0, 0.0, False, -1), readme=(2 / 3, 0.5, True, 1), length=2,
    ),
    # "《" is not in LV-Eval's punctuation list ("》" is): the answer is 《 红楼梦 -> P 1, R 1/2
    "zh_book_title_marks": Case(
        "红楼梦", ("《红楼梦》",), "红楼梦", "zh",
        code=(2 / 3, 1.0, True, 0), readme=(2 / 3, 1.0, True, 0), length=3,
    ),
    "zh_book_title_marks_repeated": Case(
        "《红楼梦》", ("《红楼梦》",), "红楼梦", "zh",
        code=(1.0, 1.0, True, 0), readme=(1.0, 1.0, True, 0), length=5,
    ),
    # Latin letters inside Chinese are lower-cased: iphone 15 on both sides
    "zh_case": Case(
        "IPHONE 15", ("iPhone 15",), "iPhone", "zh",
        code=(1.0, 1.0, True, 0), readme=(1.0, 1.0, True, 0), length=8,
    ),
}  # fmt: skip


def _expected(case: Case, mode: str) -> AKResult:
    score, recall, passed, index = case.code if mode == "reference_code" else case.readme
    return AKResult(
        pytest.approx(score, abs=1e-12),
        None if recall is None else pytest.approx(recall, abs=1e-12),
        passed,
        index,
        case.length,
    )


@pytest.mark.parametrize("mode", ["reference_code", "readme"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_ak_case(name: str, mode: str) -> None:
    case = CASES[name]
    result = ak_score(
        case.prediction, case.answers, case.keywords, language=case.language, mode=mode
    )
    assert result == _expected(case, mode)
