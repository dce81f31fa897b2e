"""The shipped entailment reader gives the verdict (or the failure) the toolkit's pydantic
validation of ``{"entails": bool}`` gave, on replies of every shape a judge sends."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from benchsmith_scoring.wikigen import EntailsError, read_entails
from pipelines.evaluation.wikigen import EntailsAnswer
from pipelines.llm.structured import AnswerError, parse_answer


class PydanticEntails(BaseModel):
    """The answer model as the toolkit validated it before the shared reader: fields only."""

    entails: bool


REPLIES = [
    '{"entails": true}', '{"entails": false}', 'Sure!\n```json\n{"entails": true}\n```',
    '{"entails": 1}', '{"entails": 0}', '{"entails": 1.0}', '{"entails": -0.0}',
    '{"entails": "yes"}', '{"entails": "No"}', '{"entails": "TRUE"}', '{"entails": "t"}',
    '{"entails": "off"}', '{"entails": " true"}', '{"entails": "maybe"}', '{"entails": ""}',
    '{"entails": 2}', '{"entails": -1}', '{"entails": 2.0}', '{"entails": 1.5}',
    '{"entails": null}', '{"entails": []}', '{"entails": {}}', '{"entails": NaN}',
    '{"entails": 100000000000000000000000}', '{"supported": true}', "[true]", "[]",
    '[{"entails": true}]', "true", "no JSON at all", '{"entails": tru', '{"entails": true, "x": 1}',
    'first {broken then {"entails": false}', "",
]  # fmt: skip


def toolkit_before(reply: str) -> bool | str:
    """What ``find_json`` + pydantic made of a reply: the verdict, or the failure's words."""
    try:
        return parse_answer(reply, PydanticEntails).entails
    except AnswerError as exc:
        return str(exc)


def shipped(reply: str) -> bool | str:
    try:
        return read_entails(reply)
    except EntailsError as exc:
        return str(exc)


@pytest.mark.parametrize("reply", REPLIES)
def test_the_shipped_reader_reads_a_reply_as_the_toolkit_validated_it(reply: str) -> None:
    assert shipped(reply) == toolkit_before(reply)


@pytest.mark.parametrize("reply", REPLIES)
def test_the_toolkit_reads_entailment_with_the_shipped_reader(reply: str) -> None:
    try:
        found: bool | str = parse_answer(reply, EntailsAnswer).entails
    except AnswerError as exc:
        found = str(exc)
    assert found == shipped(reply)


def test_a_failed_reply_says_why() -> None:
    with pytest.raises(EntailsError, match="Field required"):
        read_entails('{"supported": true}')
    with pytest.raises(EntailsError, match="no JSON object"):
        read_entails("It does.")
