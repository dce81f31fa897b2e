"""``llm.max_cost_usd`` against a real local OpenAI-compatible server: the run stops before the
call that could pass the budget, keeps every answer in the cache, and a run with a raised
budget goes on without asking anything twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from pipelines.llm import Ask, LLMClient, LLMSettings, PromptLibrary, ResponseCache
from pipelines.llm.backends.openai_api import OpenAIBackend
from pipelines.llm.budget import BudgetExceeded, cost_usd
from pipelines.llm.tokens import TokenCounter
from tests.pipelines.llm.conftest import settings_for
from tests.support.openai_server import openai_server

GOOD = '{"colours": ["red", "green", "blue"]}'
PRICES = {"input_cost_per_mtok": 1000.0, "output_cost_per_mtok": 2000.0, "max_tokens": 50}


class Colours(BaseModel):
    colours: list[str]


def _client(settings: LLMSettings, prompts: PromptLibrary) -> LLMClient:
    return LLMClient(
        settings, OpenAIBackend(settings), cache=ResponseCache(settings.cache), prompts=prompts
    )


def _asks(n: int) -> list[Ask[Colours]]:
    return [Ask("t/pick", {"n": 3, "topic": f"topic {i}"}, Colours) for i in range(n)]


def test_the_budget_stops_before_the_call_that_could_pass_it_and_a_rerun_goes_on(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    asks = _asks(12)
    with openai_server(lambda body, n: GOOD) as (url, seen):
        probe = settings_for(url, tmp_path, **PRICES, concurrency=1)
        request = _client(probe, prompts).request("t/pick", asks[0].variables, Colours)
        worst = cost_usd(probe, TokenCounter().count(request.messages), probe.max_tokens)
        # room for two calls at their worst; each costs far less, so a few more go through
        settings = probe.model_copy(update={"max_cost_usd": 2.2 * worst})
        client = _client(settings, prompts)
        with pytest.raises(BudgetExceeded, match=r"llm.max_cost_usd is .* raise llm.max_cost"):
            list(client.ask_many(asks))
        answered = seen.count
        assert 2 <= answered < len(asks)
        cache = ResponseCache(settings.cache)
        assert len(cache) == answered  # every answer so far is kept
        spent = cost_usd(settings, *cache.tokens("openai", "local-test"))
        assert spent <= settings.max_cost_usd

        more = settings.model_copy(update={"max_cost_usd": 100 * worst})
        outcomes = list(_client(more, prompts).ask_many(asks))
    assert all(o.ok for o in outcomes)
    assert seen.count == len(asks)  # the rerun asked only what the stopped run had not


def test_a_budget_needs_prices_and_sync_mode() -> None:
    with pytest.raises(ValidationError, match="needs prices"):
        LLMSettings(max_cost_usd=1.0)
    with pytest.raises(ValidationError, match="mode: sync only"):
        LLMSettings(max_cost_usd=1.0, input_cost_per_mtok=1.0, mode="batch")
