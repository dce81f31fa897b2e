"""The mention index answers exactly what a substring scan of every normal form answers."""

from __future__ import annotations

import random

import pytest

from builders.lveval.mentions import MentionIndex
from builders.lveval.text import normal_form

ENGLISH = [
    "The Caro Islands were struck by Cyclone Imre in January 2026.",
    "New Yorkers remembered the storm; 23 people were killed.",
    "The relief fund in New York paid out 4,173 grants.",
    "Port Imre's harbour flooded; the Imre bridge held.",
    "",
    "A quiet valley, far from the coast.",
]
# normal forms of Chinese text: jieba's segments joined without separators
CHINESE = ["北京大学在北京", "上海的大学很多", "南京大桥", "京剧"]


def scan(texts: list[str], needle: str) -> list[int]:
    return [i for i, text in enumerate(texts) if needle in text]


@pytest.fixture(scope="module")
def english() -> tuple[list[str], MentionIndex]:
    texts = [normal_form(t) for t in ENGLISH]
    return texts, MentionIndex(texts)


@pytest.mark.parametrize(
    ("phrase", "found"),
    [
        ("Cyclone Imre", [0]),
        ("Imre", [0, 3]),
        ("New York", [2]),  # "New Yorkers" is another word
        ("York", [2]),
        ("Yorker", []),  # only inside a longer word
        ("Yorkers", [1]),
        ("23", [1]),
        ("4,173", [2]),  # punctuation dropped on both sides: "4173"
        ("the Imre bridge", [3]),  # the article is dropped, as in the texts
        ("bridge held", [3]),
        ("imre bridge held the", [3]),
        ("islands were", [0]),
        ("islands cyclone", []),  # both words occur, not next to each other
    ],
)
def test_english_needles_match_whole_words_as_the_scan_does(english, phrase, found) -> None:
    texts, index = english
    needle = normal_form(phrase)
    assert index.containing(needle) == scan(texts, needle) == found


@pytest.mark.parametrize(
    ("needle", "found"),
    [
        ("北京", [0]),
        ("京", [0, 2, 3]),  # one character, inside words of any text
        ("京大", [0, 2]),  # across jieba's boundary between 北京 and 大学, and within 南京大桥
        ("大学", [0, 1]),
        ("学在北", [0]),
        ("京京", []),  # both characters occur, never together
        ("天津", []),
    ],
)
def test_chinese_needles_match_characters_across_word_boundaries(needle, found) -> None:
    index = MentionIndex(CHINESE)
    assert index.containing(needle) == scan(CHINESE, needle) == found


def test_a_needle_without_spaces_finds_a_piece_of_an_english_word(english) -> None:
    texts, index = english
    assert index.containing("ork") == scan(texts, "ork") == [1, 2]


@pytest.mark.parametrize("needle", ["", " ", "  ", "\t", " imre", "imre ", " new  york ", "a\nb"])
def test_empty_and_irregular_needles_are_answered_by_a_scan(english, needle) -> None:
    texts, index = english
    assert index.containing(needle) == scan(texts, needle)


def test_random_needles_agree_with_the_scan() -> None:
    rng = random.Random(5)
    words = ["imre", "caro", "bay", "port", "ice", "dice", "price", "23", "230", "北", "京"]
    texts = [" " + " ".join(rng.choices(words, k=rng.randint(0, 12))) + " " for _ in range(60)]
    texts += ["".join(rng.choices(words, k=rng.randint(0, 8))) for _ in range(20)]
    index = MentionIndex(texts)
    for _ in range(400):
        source = rng.choice(texts)
        start = rng.randrange(len(source) + 1)
        needle = source[start : start + rng.randint(0, 12)]
        if rng.random() < 0.5:
            needle = normal_form(needle)  # whole words with a space at each end
        assert index.containing(needle) == scan(texts, needle), repr(needle)
