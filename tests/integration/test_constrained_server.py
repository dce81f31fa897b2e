"""The schema-enforcing test server speaks OpenAI's chat completions: answers held to a JSON
schema parse even when ``max_tokens`` cuts them short, usage is counted with the tokenizer, and
an unknown model or a bad schema is refused the way OpenAI refuses it."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import openai
import pytest
import torch

from tests.support.smollm import SmolLMServer

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "object",
    "properties": {
        "cities": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 2},
        "country": {"type": "string", "enum": ["France", "Spain"]},
    },
    "required": ["cities", "country"],
    "additionalProperties": False,
}


def _client(server: SmolLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="unset", max_retries=0, timeout=600)


def _ask(server: SmolLMServer, **options: Any) -> Any:
    messages = [{"role": "user", "content": "Name some cities of France as JSON."}]
    return _client(server).chat.completions.create(
        model=server.model, messages=messages, temperature=0, **options
    )


def test_a_schema_answer_parses_and_matches_even_when_cut_short(server: SmolLMServer) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "C", "schema": SCHEMA, "strict": True}}
    for max_tokens in (200, 24):
        reply = _ask(server, max_tokens=max_tokens, response_format=fmt)
        answer = json.loads(reply.choices[0].message.content)
        assert set(answer) == {"cities", "country"} and answer["country"] in ("France", "Spain")
        assert len(answer["cities"]) >= 2 and all(answer["cities"])
        assert reply.choices[0].finish_reason in ("stop", "length")
        assert 0 < reply.usage.completion_tokens <= max_tokens
        assert reply.usage.prompt_tokens > 10


def test_json_object_gives_an_object_and_text_is_left_alone(server: SmolLMServer) -> None:
    reply = _ask(server, max_tokens=60, response_format={"type": "json_object"})
    assert isinstance(json.loads(reply.choices[0].message.content), dict)
    plain = _ask(server, max_tokens=5)
    assert plain.choices[0].finish_reason == "length" and plain.usage.completion_tokens == 5


def test_an_unknown_model_is_404_and_a_bad_schema_400(server: SmolLMServer) -> None:
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        _client(server).chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
        )
    bad = {"type": "json_schema", "json_schema": {"name": "B", "schema": {"type": "nonsense"}}}
    with pytest.raises(openai.BadRequestError, match="Invalid schema"):
        _ask(server, max_tokens=10, response_format=bad)
    with urllib.request.urlopen(f"{server.base_url}/models", timeout=60) as resp:
        assert [m["id"] for m in json.loads(resp.read())["data"]] == [server.model]


def test_the_tests_model_is_served_with_int8_linear_layers(server: SmolLMServer) -> None:
    """The shared server quantizes (tests.support.smollm: the same weights, decoding faster);
    the engine's float32 path is what ``int8=False`` serves."""
    from tests.support.constrained_server import quantized

    assert server.int8
    assert "int8 linear layers" in server.log_path.read_text("utf-8")
    linear = torch.nn.Sequential(torch.nn.Linear(8, 4))
    int8 = quantized(linear)
    assert type(int8[0]).__name__ == "Linear" and type(int8[0]) is not torch.nn.Linear
    x = torch.randn(3, 8)
    assert torch.allclose(int8(x), linear(x), atol=0.05)
