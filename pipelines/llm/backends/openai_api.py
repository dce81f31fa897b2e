"""The ``openai`` backend: any OpenAI-compatible server through the ``openai`` SDK.

The SDK's own retries are off: the client retries with backoff and Retry-After in one place.
The key is read from the environment variable the settings name, which is registered as a
secret (:func:`pipelines.secrets.register_env`): its value is redacted wherever a server echoes
it, in a failure's reason and in an answer before the cache stores it.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from pipelines.llm.backends.base import Backend, CallFailed, estimate_tokens
from pipelines.llm.backends.sdk_call import call_sdk
from pipelines.llm.records import ChatRequest, ChatResponse
from pipelines.llm.settings import LLMSettings
from pipelines.llm.structured import is_strict
from pipelines.secrets import redact, register_env

log = logging.getLogger(__name__)

NO_KEY = "unset"
"""Sent when the key variable is unset: local servers (vLLM, transformers serve) need none."""


class OpenAIBackend(Backend):
    """Chat completions from ``settings.base_url`` (the OpenAI API when unset)."""

    name = "openai"

    def __init__(self, settings: LLMSettings):
        import openai

        self.model = settings.model
        self.key_env = settings.key_env
        register_env(self.key_env)
        key = os.environ.get(self.key_env)
        if not key:
            log.debug("%s is unset; calling %s without a key", self.key_env, settings.base_url)
        self.base_url = settings.base_url or "https://api.openai.com/v1"
        self._client = openai.OpenAI(
            api_key=key or NO_KEY,
            base_url=self.base_url,
            max_retries=0,
            timeout=settings.timeout_s,
        )

    def complete(self, request: ChatRequest) -> ChatResponse:
        fmt = request.response_format
        if fmt == "json_schema" and not self.fallback:
            try:
                return self._complete(request, _json_schema(request))
            except CallFailed as exc:
                if not refuses_schema(exc.reason):
                    raise
                self.fallback = f"json_schema refused ({exc.reason}); json_object sent instead"
                log.warning("%s: %s", self.base_url, self.fallback)
        return self._complete(request, self._plain_format(request))

    @property
    def sdk(self) -> Any:
        """The ``openai.OpenAI`` client (key, base URL and timeout set; no SDK retries)."""
        return self._client

    def batch_body(self, request: ChatRequest) -> dict[str, Any]:
        """The body of ``request`` as a Batch API line carries it: the same body
        :meth:`complete` sends, in the response format it would try first."""
        if request.response_format == "json_schema" and not self.fallback:
            return chat_body(self.model, request, _json_schema(request))
        return chat_body(self.model, request, self._plain_format(request))

    @staticmethod
    def _plain_format(request: ChatRequest) -> dict[str, Any] | None:
        """JSON mode for any structured ask (the fallback from a refused schema), else none."""
        if request.response_format in ("json_schema", "json_object"):
            return {"type": "json_object"}
        return None

    def _complete(self, request: ChatRequest, response_format: dict | None) -> ChatResponse:
        import openai

        body = chat_body(self.model, request, response_format)
        reply = call_sdk(self, openai, self._client.chat.completions, _message, **body)
        return chat_response(reply, request)


def chat_body(
    model: str, request: ChatRequest, response_format: dict[str, Any] | None
) -> dict[str, Any]:
    """The ``chat.completions`` request body: what a call sends and what a batch line holds."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
    }
    if response_format is not None:
        body["response_format"] = response_format
    return body


def chat_response(reply: Any, request: ChatRequest | None) -> ChatResponse:
    """The answer in a ``chat.completion`` reply, with its usage (estimated when the server
    reports none, from the request's messages when known), its ``finish_reason``, and any
    secret's value it echoes redacted (its text is otherwise kept as it came).

    Raises :class:`CallFailed` when the reply is not a completion (a 200 from a proxy or a
    misconfigured server): no choice, no message, or text that is not a string. It is never
    cached."""
    choices = getattr(reply, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise CallFailed(f"the server answered without a completion: {_shown(reply)}")
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    if message is None or not isinstance(content, str | None):
        raise CallFailed(f"the server answered without a completion message: {_shown(reply)}")
    text = redact(content or "", patterns=False)
    finish = getattr(choice, "finish_reason", None) or "stop"
    usage = getattr(reply, "usage", None)
    if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
        return ChatResponse(
            text, usage.prompt_tokens, usage.completion_tokens or 0, finish_reason=finish
        )
    prompt_text = " ".join(m.content for m in request.messages) if request else ""
    return ChatResponse(
        text, estimate_tokens(prompt_text), estimate_tokens(text), finish_reason=finish
    )


def _shown(reply: Any) -> str:
    """What came instead of a completion, redacted and cut to 200 characters."""
    dump = getattr(reply, "model_dump_json", None)
    try:
        text = dump(warnings=False) if dump is not None else repr(reply)
    except Exception:
        text = repr(reply)
    return redact(text)[:200]


def _json_schema(request: ChatRequest) -> dict[str, Any]:
    """The ``response_format`` of OpenAI's structured outputs for the request's schema."""
    schema = dict(request.schema or {})
    return {
        "type": "json_schema",
        "json_schema": {
            "name": request.schema_name or "answer",
            "schema": schema,
            "strict": is_strict(schema),
        },
    }


def refuses_schema(reason: str) -> bool:
    """Whether a refused call names the structured-output parameter (an HTTP 400 such as
    ``Unsupported parameter: 'response_format.json_schema'``)."""
    lowered = reason.lower()
    return reason.startswith("HTTP 400") and (
        "json_schema" in lowered or "response_format" in lowered
    )


def _message(exc: Any) -> str:
    """The server's message, redacted before it is cut to 300 characters (a key cut in two
    would no longer be recognised)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        detail = body.get("message") or body.get("error") or body
        return redact(str(detail))[:300]
    return redact(str(exc))[:300]
