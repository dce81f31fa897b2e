"""The ``llm`` settings: one block in ``params.yaml`` shared by every stage that asks a model."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, StrictInt, field_validator, model_validator

from builders.settings import Strict
from pipelines.paths import ProjectPath
from pipelines.secrets import register_env

KEY_ENVS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""The variable each backend reads its key from when ``llm.api_key_env`` is unset."""
BATCH_DISCOUNT = 0.5
"""Batch prices are half the sync ones where unset, as both providers document (read
2026-11-28): OpenAI's Batch API FAQ, "50% cost discount vs. the synchronous APIs"
(help.openai.com/en/articles/9197833); Anthropic's batch processing guide, "cutting costs by
50%" (platform.claude.com/docs/en/build-with-claude/batch-processing)."""


def default_key_env(backend: str | None) -> str:
    """The key variable of ``backend`` when ``llm.api_key_env`` is unset."""
    return KEY_ENVS.get(backend or "", KEY_ENVS["openai"])


class LLMSettings(Strict):
    """Which backend answers, how calls are paced and retried, and where answers are cached.

    Keys never live here: the ``openai`` and ``anthropic`` backends read the variable named by
    ``api_key_env`` (:attr:`key_env`).
    """

    backend: Literal["template", "openai", "anthropic"] = Field(
        "template",
        description=(
            "template: deterministic offline answers, no model (the snapshot default); "
            "openai: any OpenAI-compatible server (OpenAI, vLLM, transformers serve, Ollama); "
            "anthropic: Anthropic's Messages API through the anthropic SDK."
        ),
    )
    base_url: str | None = Field(
        None,
        pattern=r"^https?://",
        description=(
            "Server URL. openai: ending in /v1, unset: the OpenAI API; anthropic: the server's "
            "root (a trailing /v1 is dropped), unset: the Anthropic API."
        ),
    )
    model: str = Field("gpt-4o-mini", description="Model name sent with every call.")
    api_key_env: str | None = Field(
        None,
        description=(
            "Environment variable holding the key (may be unset for a local server). Unset: "
            "OPENAI_API_KEY for the openai backend, ANTHROPIC_API_KEY for anthropic."
        ),
    )
    temperature: float = Field(
        0.0, ge=0, le=2, description="Sampling temperature (0: greedy; anthropic takes 0 to 1)."
    )
    max_tokens: StrictInt = Field(1024, gt=0, description="Completion cap per call, in tokens.")
    seed: StrictInt = Field(
        0,
        description=(
            "Sent to an OpenAI-compatible server (Anthropic's API has no seed) and part of "
            "every cache key."
        ),
    )
    response_format: Literal["none", "json_object", "json_schema"] = Field(
        "none",
        description=(
            "What structured asks send as response_format: nothing; json_object (JSON mode); "
            "or json_schema, the answer model's JSON schema, which OpenAI, vLLM, SGLang, "
            "llama.cpp and Ollama enforce (a server that refuses it gets json_object instead, "
            "once, and stats.json says so) and Anthropic's structured outputs take as "
            "output_config.format (anthropic has no JSON mode: json_object sends nothing, and a "
            "model that refuses the schema gets none). Answers are parsed, validated and "
            "checked in every case: a schema guarantees shape, not content."
        ),
    )
    concurrency: StrictInt = Field(
        4,
        gt=0,
        description=(
            "Calls in flight at once: the ceiling of the adaptive limit, or the fixed pool's "
            "size with adaptive_concurrency off."
        ),
    )
    adaptive_concurrency: bool = Field(
        True,
        description=(
            "Pace calls to each server and model (shared by every client of the process): "
            "start at concurrency, multiply the limit by 0.75 on a 429 (never below 1), add 1 "
            "after 25 successes in a row, hold every new call for a 429's Retry-After and "
            "while the rate-limit headers say nothing is left. false: a fixed pool of "
            "concurrency calls, each retry waiting alone (the openai backend in sync mode; "
            "the template backend is never paced)."
        ),
    )
    retries: StrictInt = Field(4, ge=0, description="Retries on 429, 5xx, timeouts, lost links.")
    backoff_s: float = Field(1.0, ge=0, description="First backoff; doubles, with jitter.")
    max_retry_after_s: float = Field(120.0, ge=0, description="Longest Retry-After honoured.")
    timeout_s: float = Field(120.0, gt=0, description="Cap on one call.")
    reasks: StrictInt = Field(
        2, ge=0, description="Re-asks with the validation error after an unusable answer."
    )
    mode: Literal["sync", "batch"] = Field(
        "sync",
        description=(
            "sync: one call per request, llm.concurrency at a time; batch (openai and "
            "anthropic backends): each step's asks go as one OpenAI Batch API job or Anthropic "
            "Message Batch (half the price, answers within 24 hours), re-asks as further jobs. "
            "Answers land in the same cache under the same keys, so batch and sync runs are "
            "interchangeable."
        ),
    )
    batch_poll_s: float = Field(30.0, gt=0, description="Seconds between polls of a batch.")
    batch_completion_window: Literal["24h"] = Field(
        "24h", description="Completion window asked for; the only one the Batch API offers."
    )
    batch_max_wait_s: float = Field(
        26 * 3600.0,
        gt=0,
        description=(
            "Longest a step polls its batches before the stage stops; the batches are "
            "recorded, so a rerun resumes polling them instead of submitting again."
        ),
    )
    batch_max_requests: StrictInt = Field(
        50_000,
        gt=0,
        le=50_000,
        description=(
            "Requests per batch job (OpenAI's Batch API allows 50,000 and 200 MB per file; "
            "Anthropic's Message Batches 100,000 and 256 MB per batch)."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: object) -> object:
        if isinstance(data, dict) and "json_mode" in data:
            raise ValueError(
                "llm.json_mode is now llm.response_format: json_object for true, none for "
                "false, or json_schema to send each answer's schema"
            )
        return data

    cache: ProjectPath = Field(
        Path(".cache/llm/responses.sqlite"),
        description=(
            "SQLite response cache shared by every stage; outside DVC outputs, so it survives "
            "`dvc repro` and a rebuild asks only new questions."
        ),
    )
    cache_template: bool = Field(
        False,
        description=(
            "Cache the template backend's answers too, as a real model's are: a rebuild then "
            "shows which asks are new (each responder answers from its ask alone)."
        ),
    )
    input_cost_per_mtok: float = Field(
        0.0, ge=0, description="Price of a million prompt tokens, for the cost estimate (USD)."
    )
    output_cost_per_mtok: float = Field(
        0.0, ge=0, description="Price of a million completion tokens, for the cost estimate (USD)."
    )
    batch_input_cost_per_mtok: float | None = Field(
        None,
        ge=0,
        description=(
            "Price of a million prompt tokens in batch mode (USD). Unset: half of "
            "input_cost_per_mtok, the discount OpenAI's Batch API and Anthropic's Message "
            "Batches both document."
        ),
    )
    batch_output_cost_per_mtok: float | None = Field(
        None,
        ge=0,
        description=(
            "Price of a million completion tokens in batch mode (USD). Unset: half of "
            "output_cost_per_mtok."
        ),
    )
    max_cost_usd: float | None = Field(
        None,
        gt=0,
        description=(
            "Budget: the most this model's answers in the response cache may cost, at the prices "
            "of the mode (batch prices in batch mode). A run stops before a call that could pass "
            "it (priced at its prompt and full max_tokens; in batch mode, before a job whose "
            "requests could together pass it), keeping every answer; raise it and run again to "
            "go on. Unset: no limit."
        ),
    )
    tokenizer: str | None = Field(
        None,
        description=(
            "Tokenizer counting prompt tokens for `benchsmith estimate` and the budget: an OpenAI "
            "encoding (cl100k_base, o200k_base; OpenAI's message accounting), a local folder or "
            "a Hub name already in the local cache. Unset: about 4 tokens per 3 words."
        ),
    )

    @property
    def key_env(self) -> str:
        """The variable the key is read from: ``api_key_env``, else the backend's own."""
        return self.api_key_env or default_key_env(self.backend)

    def prices(self) -> tuple[float, float]:
        """USD per million prompt and completion tokens in the configured mode: in batch mode
        the batch prices, half the sync ones where unset."""
        if self.mode != "batch":
            return self.input_cost_per_mtok, self.output_cost_per_mtok
        given = (self.batch_input_cost_per_mtok, self.batch_output_cost_per_mtok)
        sync = (self.input_cost_per_mtok, self.output_cost_per_mtok)
        return tuple(  # type: ignore[return-value]
            price if price is not None else BATCH_DISCOUNT * full
            for price, full in zip(given, sync, strict=True)
        )

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, name: str | None) -> str | None:
        """A variable's name, whose value is a secret from now on: redacted wherever it would
        be written or shown (:func:`pipelines.secrets.register_env`)."""
        if name is None:
            return None
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):  # never echoed: it may be the key
            raise ValueError(
                "this names the environment variable that holds the key (such as "
                "OPENAI_API_KEY), not the key itself; put the key in that variable"
            )
        register_env(name)
        return name

    @model_validator(mode="after")
    def _priced_budget(self) -> LLMSettings:
        if self.max_cost_usd is not None and not any(self.prices()):
            raise ValueError(
                "llm.max_cost_usd needs prices: set llm.input_cost_per_mtok and "
                "llm.output_cost_per_mtok (in batch mode, or llm.batch_input_cost_per_mtok and "
                "llm.batch_output_cost_per_mtok)"
            )
        return self

    @model_validator(mode="after")
    def _anthropic_temperature(self) -> LLMSettings:
        if self.backend == "anthropic" and self.temperature > 1:
            raise ValueError(
                f"llm.temperature is {self.temperature:g}: Anthropic's Messages API takes 0 to 1"
            )
        return self
