"""Schema-constrained answers: what goes to the server as ``response_format``, how the schema
shapes the cache key, and the one fallback when a server refuses ``json_schema``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipelines.llm import Ask, LLMClient, LLMSettings, PromptLibrary, ResponseCache
from pipelines.llm.backends.openai_api import OpenAIBackend
from pipelines.llm.structured import (
    MIN_STRING,
    Limits,
    TextAnswer,
    answer_schema,
    fitted,
    is_strict,
    limited,
)
from tests.pipelines.llm.conftest import settings_for
from tests.support.openai_server import openai_server

GOOD = '{"colours": ["red", "green", "blue"]}'


class Colours(BaseModel):
    """A closed answer: OpenAI's strict mode accepts its schema."""

    model_config = ConfigDict(extra="forbid")
    colours: list[str] = Field(min_length=1, max_length=8)


class LooseColours(BaseModel):
    colours: list[str]
    note: str = ""


def _client(url: str, tmp_path: Path, prompts: PromptLibrary, fmt: str) -> LLMClient:
    settings = settings_for(url, tmp_path, response_format=fmt)
    return LLMClient(
        settings, OpenAIBackend(settings), cache=ResponseCache(settings.cache), prompts=prompts
    )


def _ask(schema: type[BaseModel] = Colours, topic: str = "sea") -> Ask[Any]:
    return Ask("t/pick", {"n": 3, "topic": topic}, schema)


@pytest.mark.parametrize(
    ("fmt", "sent"),
    [("none", None), ("json_object", {"type": "json_object"})],
)
def test_none_and_json_object_send_what_they_name(tmp_path, prompts, fmt, sent) -> None:
    with openai_server(lambda body, n: GOOD) as (url, seen):
        outcome = _client(url, tmp_path, prompts, fmt).ask(_ask())
    assert outcome.ok
    assert seen.bodies[0].get("response_format") == sent


def test_json_schema_sends_the_answer_models_schema(tmp_path, prompts) -> None:
    with openai_server(lambda body, n: GOOD) as (url, seen):
        client = _client(url, tmp_path, prompts, "json_schema")
        assert client.ask(_ask(Colours)).ok
        assert client.ask(_ask(LooseColours)).ok
        assert client.ask(Ask("t/pick", {"n": 1, "topic": "prose"}, TextAnswer)).value
    strict, loose, prose = (b.get("response_format") for b in seen.bodies)
    assert strict["type"] == "json_schema"
    assert strict["json_schema"]["name"] == "Colours"
    sent = strict["json_schema"]["schema"]
    declared = Colours.model_json_schema()
    assert {k: v for k, v in sent.items() if k != "properties"} == {
        **{k: v for k, v in declared.items() if k != "properties"},
        "additionalProperties": False,
    }
    colours = sent["properties"]["colours"]
    assert (colours["minItems"], colours["maxItems"]) == (1, 8)
    # each colour is bounded so that eight of them fit max_tokens, and may not be empty
    assert colours["items"]["minLength"] == 1 and colours["items"]["maxLength"] >= 24
    assert strict["json_schema"]["strict"] is True
    # every object is closed in what is sent; an optional field still rules out strict mode
    assert loose["json_schema"]["schema"]["additionalProperties"] is False
    assert loose["json_schema"]["strict"] is False
    assert prose is None  # a prose answer has no schema to send
    assert client.stats()["response_format"] == "json_schema"


def test_the_schema_is_part_of_the_cache_key(tmp_path, prompts) -> None:
    with openai_server(lambda body, n: GOOD) as (url, seen):
        client = _client(url, tmp_path, prompts, "json_schema")
        client.ask(_ask(Colours))
        client.ask(_ask(Colours))  # the same question and schema: from the cache
        client.ask(_ask(LooseColours))  # the same messages, another schema: asked
    assert seen.count == 2
    assert client.stats()["cache_hits"] == 1


def test_a_server_refusing_json_schema_gets_json_object_once_and_the_run_says_so(
    tmp_path, prompts
) -> None:
    def reply(body: dict, n: int):
        if body.get("response_format", {}).get("type") == "json_schema":
            message = "Unsupported parameter: 'response_format.json_schema'"
            return 400, {}, json.dumps({"error": {"message": message}})
        return GOOD

    with openai_server(reply) as (url, seen):
        client = _client(url, tmp_path, prompts, "json_schema")
        outcomes = [client.ask(_ask(topic=t)) for t in ("sea", "sky", "land")]
    assert all(o.ok for o in outcomes)
    kinds = [b.get("response_format", {}).get("type") for b in seen.bodies]
    assert kinds == ["json_schema", "json_object", "json_object", "json_object"]
    stats = client.stats()
    assert "json_schema refused (HTTP 400" in stats["response_format_fallback"]
    assert stats["failed"] == 0


def test_another_400_is_not_taken_for_a_refused_schema(tmp_path, prompts) -> None:
    def reply(body: dict, n: int):
        return 400, {}, '{"error": {"message": "messages: too long"}}'

    with openai_server(reply) as (url, seen):
        client = _client(url, tmp_path, prompts, "json_schema")
        outcome = client.ask(_ask())
    assert not outcome.ok and "HTTP 400" in outcome.error
    assert seen.count == 1 and "response_format_fallback" not in client.stats()


def test_the_old_json_mode_key_names_its_new_home() -> None:
    with pytest.raises(ValidationError, match=r"llm.json_mode is now llm.response_format"):
        LLMSettings.model_validate({"json_mode": True})


def test_strictness_follows_openais_rules() -> None:
    assert is_strict(Colours.model_json_schema())
    assert not is_strict(LooseColours.model_json_schema())
    assert LooseColours.model_validate({"colours": ["red"], "extra": 1})  # validation unchanged
    nested = {
        "type": "object",
        "additionalProperties": False,
        "required": ["a"],
        "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}},
    }
    assert not is_strict(nested)  # the inner object is open


class Quote(BaseModel):
    passage_id: str
    quote: str


class Drafts(BaseModel):
    picked: list[str]
    quotes: list[Quote]


def test_limits_name_the_valid_values_and_list_sizes_by_property() -> None:
    limits = Limits(
        enums={"passage_id": ["p1", "p2", "p1"], "picked": ["a", "b"]},
        min_items={"quotes": 1},
        max_items={"quotes": 3, "picked": 2},
    )
    schema = limited(answer_schema(Drafts), limits)
    quote = schema["$defs"]["Quote"]["properties"]["passage_id"]
    assert quote["enum"] == ["p1", "p2"]
    picked = schema["properties"]["picked"]
    assert picked["items"]["enum"] == ["a", "b"] and picked["maxItems"] == 2
    assert schema["properties"]["quotes"]["minItems"] == 1
    assert schema["properties"]["quotes"]["maxItems"] == 3
    assert "enum" not in schema["$defs"]["Quote"]["properties"]["quote"]


def test_an_asks_limits_go_out_with_its_schema(tmp_path, prompts) -> None:
    limits = Limits(max_items={"colours": 3})
    with openai_server(lambda body, n: GOOD) as (url, seen):
        client = _client(url, tmp_path, prompts, "json_schema")
        assert client.ask(Ask("t/pick", {"n": 3, "topic": "sea"}, LooseColours, None, limits)).ok
    sent = seen.bodies[0]["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["colours"]["maxItems"] == 3


class Evidence(BaseModel):
    passage_id: str
    quote: str


class Draft(BaseModel):
    question: str
    answers: list[str]
    hops: int = 1
    evidence: list[Evidence]


class Questions(BaseModel):
    drafts: list[Draft]


def _largest(schema: Any) -> Any:
    """The largest answer ``schema`` allows: every list full, every string at its longest."""
    if "anyOf" in schema:
        return max((_largest(o) for o in schema["anyOf"]), key=lambda v: len(json.dumps(v)))
    kind = schema.get("type")
    if kind == "object":
        return {k: _largest(v) for k, v in schema["properties"].items()}
    if kind == "array":
        return [_largest(schema["items"]) for _ in range(schema["maxItems"])]
    if kind == "string":
        return max(schema["enum"], key=len) if "enum" in schema else "x" * schema["maxLength"]
    return 1234567


@pytest.mark.parametrize("max_tokens", [300, 1024, 4096])
def test_a_fitted_schemas_largest_answer_fits_max_tokens(max_tokens: int) -> None:
    limits = Limits(enums={"passage_id": ["p-1", "p-22"]}, max_items={"drafts": 3})
    schema = fitted(limited(answer_schema(Questions), limits), max_tokens)
    assert "$defs" not in schema and "$ref" not in json.dumps(schema)  # each place has bounds
    draft = schema["properties"]["drafts"]["items"]
    assert schema["properties"]["drafts"]["maxItems"] == 3  # the ask's size is kept
    assert draft["properties"]["evidence"]["maxItems"] == 4  # an unsized list gets the default
    assert draft["properties"]["evidence"]["items"]["properties"]["passage_id"]["enum"] == [
        "p-1",
        "p-22",
    ]
    largest = json.dumps(_largest(schema), separators=(",", ":"))
    length = draft["properties"]["question"]["maxLength"]
    assert draft["properties"]["question"]["minLength"] == 1
    if length > MIN_STRING:  # not clamped: the whole answer fits in three characters a token
        assert len(largest) <= max_tokens * 3
        assert len(json.dumps(_largest(fitted(answer_schema(Questions), max_tokens * 2)))) > len(
            largest
        )
    else:
        assert max_tokens == 300


def test_fitting_keeps_declared_lengths_and_refuses_a_self_referring_schema() -> None:
    class Named(BaseModel):
        name: str = Field(min_length=3, max_length=10)
        kind: str

    schema = fitted(answer_schema(Named), 100)
    assert schema["properties"]["name"] == {
        "maxLength": 10,
        "minLength": 3,
        "title": "Name",
        "type": "string",
    }
    assert schema["properties"]["kind"]["maxLength"] >= MIN_STRING

    class Tree(BaseModel):
        label: str
        children: list[Tree] = []

    with pytest.raises(ValueError, match="Tree refers to itself"):
        fitted(answer_schema(Tree), 100)
