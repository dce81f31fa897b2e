"""The ``llm`` settings: one block in ``params.yaml`` shared by every stage that asks a model."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, StrictInt, model_validator

from builders.settings import Strict
from pipelines.paths import ProjectPath


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
    temperature: float = Field(0.0, ge=0, le=2)
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
    concurrency: StrictInt = Field(4, gt=0, description="Calls in flight at once.")
    retries: StrictInt = Field(4, ge=0, description="Retries on 429, 5xx, timeouts, lost links.")
    backoff_s: float = Field(1.0, ge=0, description="First backoff; doubles, with jitter.")
    max_retry_after_s: float = Field(120.0, ge=0, description="Longest Retry-After honoured.")
    timeout_s: float = Field(120.0, gt=0, description="Cap on one call.")
    reasks: StrictInt = Field(
        2, ge=0, description="Re-asks with the validation error after an unusable answer."
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
    input_cost_per_mtok: float = Field(
        0.0, ge=0, description="Price of a million prompt tokens, for the cost estimate (USD)."
    )
    output_cost_per_mtok: float = Field(
        0.0, ge=0, description="Price of a million completion tokens, for the cost estimate (USD)."
    )
