"""LV-Eval's AK metric: an answer-keyword gate, then word-level F1 against the answer.

A prediction is first checked against the *answer keywords* of its item: if too few of the
keywords appear in it (recall below 0.2 for English, 0.4 for Chinese) it scores 0. Otherwise it
scores the F1 of its words against the reference answer. Common function words (the blacklists
below) should not earn credit. Two modes are offered, because LV-Eval's description and its
published code disagree:

- ``"readme"`` (our default) follows what LV-Eval describes. The gate counts only keywords that
  are not blacklisted, both in the overlap and in the denominator. An item without keywords is
  gated by each answer itself. Blacklisted words are removed from the prediction and from the
  answers before F1, and the prediction is compared with every answer, keeping the best.
- ``"reference_code"`` reproduces the published code. Only the first answer is scored. The gate
  drops blacklisted words from the overlap but still counts them in the denominator, so
  keywords full of function words are harder to pass. An English item without keywords has no
  gate; a Chinese one uses the first answer as its keywords. F1 keeps the blacklisted words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .text import check_language, text_length, token_f1, tokens

THRESHOLDS: dict[str, float] = {"en": 0.2, "zh": 0.4}

_WORDS_EN = (
    "and to of in her was with for it from is that his he by she they or at because be on are"
    " their what as had were about being this who but have has when which does"
)
_WORDS_ZH = (
    "的 和 是 等 在 年 可以 为 与 ‰ 了 或 一种 月 c 至 日 有 进行 于 不 中 × 根据"
    " 小 由 亩 也 要 指 法 会 元 主要 以及 通过 首先 对 然后 号 以 所 后 丁 包括"
    " 无 将 用 能 形 方面 因素 位于 而 从 到 一定 用于 但 使用 让 具有 并 亿元 万元"
    " 上 类 基于 才 来 地 片 其他 个 或者 变得 时 给 你 使 条 受 已经 带 度"
)
BLACKLIST_EN: frozenset[str] = frozenset(_WORDS_EN.split())
BLACKLIST_ZH: frozenset[str] = frozenset(_WORDS_ZH.split())
_BLACKLISTS = {"en": BLACKLIST_EN, "zh": BLACKLIST_ZH}

Language = Literal["en", "zh"]


@dataclass(frozen=True)
class AKResult:
    """The AK score of one prediction and how it was reached."""

    score: float
    gate_recall: float | None  # None when no gate ran
    gate_passed: bool
    best_answer: int  # index into the answers, -1 when nothing was scored
    prediction_words: int  # words (en) or characters without whitespace (zh)


def ak_score(
    prediction: str,
    answers: Sequence[str],
    answer_keywords: str | None,
    *,
    language: str = "en",
    mode: Literal["readme", "reference_code"] = "readme",
    threshold: float | None = None,
) -> AKResult:
    """Score one prediction with LV-Eval's AK metric (see the module docstring for the modes)."""
    check_language(language)
    if not answers:
        raise ValueError("ak_score needs at least one reference answer")
    if mode not in ("readme", "reference_code"):
        raise ValueError(f"unknown AK mode {mode!r}: use 'readme' or 'reference_code'")
    limit = THRESHOLDS[language] if threshold is None else threshold
    blacklist = _BLACKLISTS[language]
    pred = tokens(prediction, language)
    length = text_length(prediction, "words" if language == "en" else "characters")

    if mode == "reference_code":
        keywords = answer_keywords or (answers[0] if language == "zh" else None)
        recall = _code_recall(pred, tokens(keywords, language), blacklist) if keywords else None
        if recall is not None and recall < limit:
            return AKResult(0.0, recall, False, -1, length)
        return AKResult(token_f1(pred, tokens(answers[0], language)), recall, True, 0, length)

    def gate(keyword_text: str) -> float | None:
        return _readme_recall(pred, tokens(keyword_text, language), blacklist)

    shared = gate(answer_keywords) if answer_keywords else None
    best: tuple[float, int, float | None] | None = None  # (score, index, recall)
    top_recall: float | None = None
    for index, answer in enumerate(answers):
        recall = shared if answer_keywords else gate(answer)
        if recall is not None:
            top_recall = recall if top_recall is None else max(top_recall, recall)
            if recall < limit:
                continue
        score = _content_f1(pred, tokens(answer, language), blacklist)
        if best is None or score > best[0]:
            best = (score, index, recall)
    if best is None:
        return AKResult(0.0, top_recall, False, -1, length)
    return AKResult(best[0], best[2], True, best[1], length)


def _code_recall(pred: list[str], keywords: list[str], blacklist: frozenset[str]) -> float | None:
    """Published-code gate: blacklisted words leave the overlap but stay in the denominator."""
    if not keywords:
        return None
    common = Counter(pred) & Counter(keywords)
    return sum(n for word, n in common.items() if word not in blacklist) / len(keywords)


def _readme_recall(pred: list[str], keywords: list[str], blacklist: frozenset[str]) -> float | None:
    """Described gate: recall of the non-blacklisted keywords (all of them if none remain)."""
    content = [w for w in keywords if w not in blacklist] or keywords
    if not content:
        return None
    return sum((Counter(pred) & Counter(content)).values()) / len(content)


def _content_f1(pred: list[str], ref: list[str], blacklist: frozenset[str]) -> float:
    """F1 without blacklisted words; a reference made only of them is compared as it is."""
    content = [w for w in ref if w not in blacklist]
    if not content:
        return token_f1(pred, ref)
    return token_f1([w for w in pred if w not in blacklist], content)
