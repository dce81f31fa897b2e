"""The one sentence splitter every family uses (``builders.text.sentences``)."""

from __future__ import annotations

import pytest

from builders.text import sentence_starts, sentences


def split(text: str) -> list[str]:
    return [text[start:end] for start, end in sentences(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Dr. Linnea Fahr visited St. Aldric's Church. She left at 3 p.m. on Friday.",
            ["Dr. Linnea Fahr visited St. Aldric's Church.", "She left at 3 p.m. on Friday."],
        ),
        (
            "Flood defences hold\nThe levee at Meridal held. Roads reopened.",
            ["Flood defences hold", "The levee at Meridal held.", "Roads reopened."],
        ),
        (
            "It took place on 21 May 2022.[2][3] The stadium holds 90,000 people.[1, 9]",
            ["It took place on 21 May 2022.[2][3]", "The stadium holds 90,000 people.[1, 9]"],
        ),
        (
            '"We couldn\'t move," she said. "Not forward, not back." It cost 3.5 million.',
            ['"We couldn\'t move," she said.', '"Not forward, not back."', "It cost 3.5 million."],
        ),
        ("今天下雨。明天晴天！好吗？行", ["今天下雨。", "明天晴天！", "好吗？", "行"]),
        ("  \n\n ", []),
    ],
)
def test_sentences_split_where_a_reader_would(text: str, expected: list[str]) -> None:
    assert split(text) == expected


def test_spans_are_exact_offsets_without_surrounding_whitespace() -> None:
    text = "  First one.   Second one?\n\n  Third [4].  "
    spans = sentences(text)
    assert [text[s:e] for s, e in spans] == ["First one.", "Second one?", "Third [4]."]
    assert all(text[s] != " " and text[e - 1] != " " for s, e in spans)
    assert sentence_starts(text) == [0, spans[1][0], spans[2][0]]
