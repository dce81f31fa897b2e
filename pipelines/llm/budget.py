"""``llm.max_cost_usd``: stop before the call that would take the model's spend past a budget.

The spend is what the answers of the configured backend and model in the response cache cost at
the configured prices, so it carries across stages, processes and runs: a stopped run keeps every
answer it got, and raising the budget lets the next run go on from there without asking anything
twice. A call is priced before it is sent at its prompt tokens (counted with ``llm.tokenizer``
when set) and its full ``max_tokens``, so no call can cross the budget however long it answers.

In batch mode the prices are the batch prices (:meth:`LLMSettings.prices`), the cached answers'
spend included, and a whole job is priced before it is submitted (:meth:`Budget.reserve_job`):
every request at its prompt and full ``max_tokens``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

from pipelines.errors import LLMError
from pipelines.llm.cache import ResponseCache
from pipelines.llm.records import ChatRequest, ChatResponse
from pipelines.llm.settings import LLMSettings
from pipelines.llm.tokens import TokenCounter


class BudgetExceeded(LLMError):
    """The next call would take the spend past ``llm.max_cost_usd``."""


def cost_usd(settings: LLMSettings, prompt_tokens: float, completion_tokens: float) -> float:
    """What the tokens cost at the prices of the configured mode (batch prices in batch mode)."""
    input_price, output_price = settings.prices()
    return (prompt_tokens * input_price + completion_tokens * output_price) / 1_000_000


class Budget:
    """The spend so far and the calls in flight, checked before every call (thread-safe)."""

    def __init__(
        self,
        settings: LLMSettings,
        cache: ResponseCache | None,
        backend: str,
        model: str,
        counter: TokenCounter | None = None,
    ):
        if settings.max_cost_usd is None:
            raise ValueError("a Budget needs llm.max_cost_usd")
        self.settings = settings
        self.limit = settings.max_cost_usd
        self.counter = counter or TokenCounter(settings.tokenizer)
        self.where = f"{model} answers in {cache.path}" if cache else f"{model} answers"
        self.spent = cost_usd(settings, *cache.tokens(backend, model)) if cache else 0.0
        self.reserved = 0.0
        self._lock = threading.Lock()

    def worst(self, request: ChatRequest) -> float:
        """The most ``request`` can cost: its prompt and its full ``max_tokens``."""
        return cost_usd(self.settings, self.counter.count(request.messages), request.max_tokens)

    def reserve(self, request: ChatRequest) -> float:
        """Set aside the most ``request`` can cost; :class:`BudgetExceeded` if that crosses the
        budget."""
        return self._reserve(self.worst(request), f"the next call ({request.prompt}")

    def reserve_job(self, requests: Sequence[ChatRequest]) -> float:
        """Set aside the most a batch job of ``requests`` can cost (each at its worst);
        :class:`BudgetExceeded` if that crosses the budget."""
        worst = sum(self.worst(r) for r in requests)
        prompts = ", ".join(sorted({r.prompt for r in requests}))
        return self._reserve(worst, f"the next batch job ({len(requests)} requests of {prompts}")

    def _reserve(self, worst: float, what: str) -> float:
        with self._lock:
            if self.spent + self.reserved + worst > self.limit:
                raise BudgetExceeded(
                    f"llm.max_cost_usd is {self.limit:g} USD: the {self.where} cost "
                    f"{self.spent:.4f} USD, and {what}, up to {worst:.4f} USD) could pass it. "
                    "Every answer so far is cached; run 'benchsmith estimate' to see what is "
                    "left, raise llm.max_cost_usd and run again to go on"
                )
            self.reserved += worst
        return worst

    def settle(self, reserved: float, response: ChatResponse | None) -> None:
        """Release a reservation; add what an answered call cost."""
        with self._lock:
            self.reserved -= reserved
            if response is not None:
                self.spent += cost_usd(
                    self.settings, response.prompt_tokens, response.completion_tokens
                )

    def settle_job(self, reserved: float, responses: Iterable[ChatResponse]) -> None:
        """Release a job's reservation; add what its answers cost."""
        cost = sum(cost_usd(self.settings, r.prompt_tokens, r.completion_tokens) for r in responses)
        with self._lock:
            self.reserved -= reserved
            self.spent += cost
