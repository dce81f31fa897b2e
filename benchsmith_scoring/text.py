"""Answer normalisation and token F1, as LV-Eval's and L-Eval's scoring code does them.

English needs nothing beyond the standard library; Chinese segments with jieba, imported only
when a Chinese text is scored.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Literal

ZH_PUNCTUATION = (
    "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗"
    "〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏."
)
_DROP_EN = str.maketrans("", "", string.punctuation)
_DROP_ZH = str.maketrans("", "", string.punctuation + ZH_PUNCTUATION)
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def normalize_en(text: str) -> str:
    """Lower-case, drop ASCII punctuation and the articles a/an/the, collapse whitespace."""
    text = text.lower().translate(_DROP_EN)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str, language: str = "en") -> list[str]:
    """Normalised English words, or normalised jieba segments for Chinese ("zh")."""
    check_language(language)
    if language == "en":
        return normalize_en(text).split()
    import jieba  # only Chinese needs it

    segments = jieba.cut(text, cut_all=False)
    cleaned = ("".join(s.lower().translate(_DROP_ZH).split()) for s in segments)
    return [s for s in cleaned if s]


def text_length(text: str, unit: Literal["words", "characters"] = "words") -> int:
    """Whitespace-separated words, or characters not counting whitespace."""
    return len(text.split()) if unit == "words" else sum(len(w) for w in text.split())


def token_f1(pred_tokens: Sequence[str], ref_tokens: Sequence[str]) -> float:
    """F1 of the multiset overlap; 0 when either side is empty or nothing overlaps."""
    same = sum((Counter(pred_tokens) & Counter(ref_tokens)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(ref_tokens)
    return 2 * precision * recall / (precision + recall)


def check_language(language: str) -> None:
    if language not in ("en", "zh"):
        raise ValueError(f"unknown language {language!r}: use 'en' or 'zh'")
