"""Finding and validating JSON in model replies, with reasons fit for a re-ask."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from pipelines.llm import AnswerError, find_json, parse_answer


class Colours(BaseModel):
    colours: list[str]


class Score(BaseModel):
    value: int
    label: str


def test_json_is_found_in_fences_and_prose() -> None:
    assert find_json('Sure! ```json\n{"colours": ["red"]}\n``` Hope it helps') == {
        "colours": ["red"]
    }
    assert find_json('Here: {"a": 1} and {"b": 2}') == {"a": 1}


def test_truncated_json_reports_where_it_broke() -> None:
    with pytest.raises(AnswerError, match="invalid JSON"):
        find_json('{"colours": ["red", "gre')


def test_no_json_at_all() -> None:
    with pytest.raises(AnswerError, match="no JSON object"):
        find_json("I think the answer is red.")


def test_schema_mismatch_names_the_field() -> None:
    with pytest.raises(AnswerError, match=r"label: Field required"):
        parse_answer('{"value": 3}', Score)
    with pytest.raises(AnswerError, match=r"value: Input should be a valid integer"):
        parse_answer('{"value": "many", "label": "x"}', Score)


def test_bare_list_fills_a_single_list_field() -> None:
    assert parse_answer('["red", "blue"]', Colours).colours == ["red", "blue"]


def test_check_rule_rejects_a_valid_but_unusable_answer() -> None:
    def three(answer: Colours) -> str | None:
        return (
            None if len(answer.colours) == 3 else f"expected 3 colours, got {len(answer.colours)}"
        )

    assert parse_answer('{"colours": ["a", "b", "c"]}', Colours, three).colours == ["a", "b", "c"]
    with pytest.raises(AnswerError, match="expected 3 colours, got 1"):
        parse_answer('{"colours": ["a"]}', Colours, three)


def test_deeply_nested_reply_is_an_answer_error_not_a_recursion_error() -> None:
    with pytest.raises(AnswerError, match="nested too deeply"):
        find_json("[" * 100_000)
    with pytest.raises(AnswerError, match="nested too deeply"):
        parse_answer("Sure: " + '{"a": ' * 100_000, Colours)
