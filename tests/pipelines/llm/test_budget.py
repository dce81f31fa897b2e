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


def test_a_budget_needs_prices() -> None:
    with pytest.raises(ValidationError, match="needs prices"):
        LLMSettings(max_cost_usd=1.0)
    with pytest.raises(ValidationError, match="needs prices"):
        LLMSettings(max_cost_usd=1.0, mode="batch", batch_input_cost_per_mtok=0.0)
    batch = LLMSettings(max_cost_usd=1.0, mode="batch", batch_output_cost_per_mtok=2.0)
    assert batch.prices() == (0.0, 2.0)


def test_batch_prices_are_half_the_sync_ones_unless_set() -> None:
    sync = LLMSettings(input_cost_per_mtok=3.0, output_cost_per_mtok=15.0)
    assert sync.prices() == (3.0, 15.0)
    assert sync.model_copy(update={"mode": "batch"}).prices() == (1.5, 7.5)
    given = sync.model_copy(update={"mode": "batch", "batch_input_cost_per_mtok": 1.0})
    assert given.prices() == (1.0, 7.5)
    assert cost_usd(given, 1_000_000, 2_000_000) == pytest.approx(16.0)


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_a_batch_job_that_could_pass_the_budget_is_never_submitted(
    tmp_path: Path, prompts: PromptLibrary, backend: str
) -> None:
    """Each job is priced at its worst (every request at its prompt and full max_tokens, at
    the batch prices) before it is submitted: a job that fits goes, one that could pass the
    budget is refused with every answer so far kept, and a raised budget goes on."""
    from tests.pipelines.llm.test_anthropic_batch import client_for as anthropic_client_for
    from tests.pipelines.llm.test_batch import client_for as openai_client_for
    from tests.support.anthropic_server import anthropic_server
    from tests.support.batch_server import batch_server

    serve, client_for = (
        (batch_server, openai_client_for)
        if backend == "openai"
        else (anthropic_server, anthropic_client_for)
    )
    first, second = _asks(4)[:2], _asks(4)[2:]
    with serve(lambda body, n: GOOD) as (url, seen):
        probe = client_for(url, tmp_path, prompts, **PRICES)
        requests = [probe.request("t/pick", a.variables, Colours) for a in first]
        counter = TokenCounter()
        worst = sum(
            cost_usd(probe.settings, counter.count(r.messages), r.max_tokens) for r in requests
        )
        assert worst == pytest.approx(
            sum(counter.count(r.messages) * 500 + 50 * 1000 for r in requests) / 1e6
        ), "batch prices: half the sync ones"
        # room for one job of two at its worst, with nothing spent: the second job (the same
        # worst) does not fit once the first one's answers are paid for
        budget = {**PRICES, "max_cost_usd": 1.001 * worst}
        outcomes = list(client_for(url, tmp_path, prompts, **budget).ask_many(first))
        assert all(o.ok for o in outcomes) and len(seen.created) == 1
        with pytest.raises(BudgetExceeded, match=r"the next batch job \(2 requests of t/pick"):
            list(client_for(url, tmp_path, prompts, **budget).ask_many(second))
        assert len(seen.created) == 1, "the job that could pass the budget was not submitted"
        more = {**PRICES, "max_cost_usd": 10 * worst}
        outcomes = list(client_for(url, tmp_path, prompts, **more).ask_many(first + second))
    assert all(o.ok for o in outcomes)
    assert [len(x) for x in seen.inputs] == [2, 2], "only the asks not answered yet went"
