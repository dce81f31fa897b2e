"""The ``llm`` settings: one block in ``params.yaml`` shared by every stage that asks a model."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, StrictInt, field_validator, model_validator

from builders.settings import Strict
from pipelines.paths import ProjectPath
from pipelines.secrets import register_env


class LLMSettings(Strict):
    """Which backend answers, how calls are paced and retried, and where answers are cached.

    Keys never live here: the ``openai`` backend reads the variable named by ``api_key_env``.
    """

    backend: Literal["template", "openai"] = Field(
        "template",
        description=(
            "template: deterministic offline answers, no model (the snapshot default); "
            "openai: any OpenAI-compatible server (OpenAI, vLLM, transformers serve, Ollama)."
        ),
    )
    base_url: str | None = Field(
        None,
        pattern=r"^https?://",
        description="Server URL ending in /v1; unset: the OpenAI API.",
    )
    model: str = Field("gpt-4o-mini", description="Model name sent with every call.")
    api_key_env: str = Field(
        "OPENAI_API_KEY", description="Environment variable holding the key (may be unset locally)."
    )
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature (0: greedy).")
    max_tokens: StrictInt = Field(1024, gt=0, description="Completion cap per call, in tokens.")
    seed: StrictInt = Field(0, description="Sent to the server and part of every cache key.")
    response_format: Literal["none", "json_object", "json_schema"] = Field(
        "none",
        description=(
            "What structured asks send as response_format: nothing; json_object (JSON mode); "
            "or json_schema, the answer model's JSON schema, which OpenAI, vLLM, SGLang, "
            "llama.cpp and Ollama enforce (a server that refuses it gets json_object instead, "
            "once, and stats.json says so). Answers are parsed, validated and checked in "
            "every case: a schema guarantees shape, not content."
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
            "sync: one call per request, llm.concurrency at a time; batch (openai backend "
            "only): each step's asks go as one OpenAI Batch API job (about half the price, "
            "answers within the completion window), re-asks as further jobs. Answers land in "
            "the same cache under the same keys, so batch and sync runs are interchangeable."
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
        description="Requests per batch job (the Batch API allows 50,000 and 200 MB per file).",
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
    max_cost_usd: float | None = Field(
        None,
        gt=0,
        description=(
            "Budget: the most this model's answers in the response cache may cost, at the prices "
            "above. A run stops before a call that could pass it (priced at its prompt and full "
            "max_tokens), keeping every answer; raise it and run again to go on. Unset: no limit."
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

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, name: str) -> str:
        """A variable's name, whose value is a secret from now on: redacted wherever it would
        be written or shown (:func:`pipelines.secrets.register_env`)."""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):  # never echoed: it may be the key
            raise ValueError(
                "this names the environment variable that holds the key (such as "
                "OPENAI_API_KEY), not the key itself; put the key in that variable"
            )
        register_env(name)
        return name

    @model_validator(mode="after")
    def _priced_budget(self) -> LLMSettings:
        if self.max_cost_usd is not None and not (
            self.input_cost_per_mtok or self.output_cost_per_mtok
        ):
            raise ValueError(
                "llm.max_cost_usd needs prices: set llm.input_cost_per_mtok and "
                "llm.output_cost_per_mtok"
            )
        if self.max_cost_usd is not None and self.mode == "batch":
            raise ValueError(
                "llm.max_cost_usd applies to mode: sync only (a batch job is paid as a whole); "
                "run 'benchsmith estimate' before a batch run instead"
            )
        return self
