"""The ``anthropic`` backend: Anthropic's Messages API through the official ``anthropic`` SDK.

Built from the API reference (platform.claude.com/docs/en/api/messages/create, read
2026-11-28). System messages go in ``system`` (joined by a blank line when there are several),
the rest as user and assistant turns; ``max_tokens`` and ``temperature`` as configured. The API
has no seed: none is sent, and the seed stays part of the cache key as for every backend.
``temperature`` is no keyword of the SDK's ``messages.create`` any more (2.10), and newer models
refuse it (HTTP 400, "`temperature` is deprecated for this model"): it goes in the body as an
extra field, and a model that refuses it is sent none from then on, once per run, with a
warning (:attr:`AnthropicBackend.dropped`).

Structured asks with ``response_format: json_schema`` send the answer's schema as
``output_config.format`` (``{"type": "json_schema", "schema": ...}``, Anthropic's structured
outputs: platform.claude.com/docs/en/build-with-claude/structured-outputs), passed through the
SDK's ``transform_schema``, which closes every object and moves the constraints the API does not
enforce (``maxItems``, ``minimum`` ...) into descriptions. A model that refuses it (HTTP 400
naming the parameter) is sent no schema from then on, once per run, and ``stats.json`` says so;
the prompt asks for JSON in every case and answers are always parsed and validated. The API has
no JSON mode: ``json_object`` sends nothing.

``stop_reason`` becomes :attr:`ChatResponse.finish_reason`: ``end_turn`` and ``stop_sequence``
are ``stop``, ``max_tokens`` is ``length``, ``refusal`` is ``content_filter``, anything else is
kept as it came. The SDK's retries are off (the client retries, with Retry-After); errors map as
the ``openai`` backend's do, 529 (overloaded) being transient like 429 and other 5xx. The key is
read from ``llm.api_key_env`` (``ANTHROPIC_API_KEY`` when unset), registered as a secret, and
redacted wherever a server echoes it.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from pipelines.llm.backends.base import Backend, CallFailed, estimate_tokens
from pipelines.llm.backends.sdk_call import call_sdk
from pipelines.llm.records import ChatRequest, ChatResponse
from pipelines.llm.settings import LLMSettings
from pipelines.secrets import redact, register_env

log = logging.getLogger(__name__)

API_URL = "https://api.anthropic.com"
REFUSALS = ("HTTP 400", "invalid_request_error")
"""How a refused request's reason begins: a call's HTTP 400, a batch request's error type."""
NO_KEY = "unset"
"""Sent when the key variable is unset (a local stand-in needs none; the API answers 401)."""
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "refusal": "content_filter",
}
"""``stop_reason`` in OpenAI's words (:attr:`ChatResponse.finish_reason`); others verbatim."""


def server_root(base_url: str | None) -> str:
    """The server's root as the SDK takes it (it adds ``/v1/messages``): ``llm.base_url`` with
    a trailing ``/v1`` dropped, or the Anthropic API."""
    if not base_url:
        return API_URL
    root = base_url.rstrip("/")
    return root.removesuffix("/v1") or root


class AnthropicBackend(Backend):
    """Messages from ``settings.base_url`` (the Anthropic API when unset)."""

    name = "anthropic"

    def __init__(self, settings: LLMSettings):
        import anthropic

        self.model = settings.model
        self.key_env = settings.key_env
        register_env(self.key_env)
        key = os.environ.get(self.key_env)
        if not key:
            log.debug("%s is unset; calling %s without a key", self.key_env, settings.base_url)
        self.base_url = server_root(settings.base_url)
        self.dropped = ""
        """Set when the model refused ``temperature`` and none is sent any more: why."""
        self._client = anthropic.Anthropic(
            api_key=key or NO_KEY,
            base_url=self.base_url,
            max_retries=0,
            timeout=settings.timeout_s,
        )

    @property
    def sdk(self) -> Any:
        """The ``anthropic.Anthropic`` client (key, base URL and timeout set; no SDK retries)."""
        return self._client

    def complete(self, request: ChatRequest) -> ChatResponse:
        try:
            return self._formatted(request)
        except CallFailed as exc:
            if not self.drops_temperature(exc.reason):
                raise
        return self._formatted(request)

    def drops_temperature(self, reason: str) -> bool:
        """Whether a failure says the model refuses ``temperature``; if so, none is sent from
        now on (a request that failed so can be sent again)."""
        lowered = reason.lower()
        if not (reason.startswith(REFUSALS) and "temperature" in lowered):
            return False
        if not self.dropped:
            self.dropped = f"temperature refused ({reason}); none sent instead"
            log.warning("%s: %s", self.base_url, self.dropped)
        return True

    def _formatted(self, request: ChatRequest) -> ChatResponse:
        if request.response_format == "json_schema" and not self.fallback:
            try:
                return self._complete(request, output_format(request))
            except CallFailed as exc:
                if not refuses_schema(exc.reason):
                    raise
                self.fallback = f"json_schema refused ({exc.reason}); no schema sent instead"
                log.warning("%s: %s", self.base_url, self.fallback)
        return self._complete(request, None)

    def batch_params(self, request: ChatRequest) -> dict[str, Any]:
        """The ``params`` of ``request`` as a Message Batch carries them: the same body
        :meth:`complete` sends, with the schema it would try first."""
        fmt = None
        if request.response_format == "json_schema" and not self.fallback:
            fmt = output_format(request)
        body = messages_body(self.model, request, fmt)
        if self.dropped:
            del body["temperature"]
        return body

    def _complete(self, request: ChatRequest, fmt: dict[str, Any] | None) -> ChatResponse:
        import anthropic

        body = messages_body(self.model, request, fmt)
        temperature = body.pop("temperature")  # no keyword of the SDK's: an extra field
        extra = None if self.dropped else {"temperature": temperature}
        reply = call_sdk(
            self, anthropic, self._client.messages, error_message, **body, extra_body=extra
        )
        return message_response(reply, request)


def messages_body(model: str, request: ChatRequest, fmt: dict[str, Any] | None) -> dict[str, Any]:
    """The Messages API request body: what a call sends and what a batch request holds."""
    system = [m.content for m in request.messages if m.role == "system"]
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": [
            {"role": m.role, "content": m.content} for m in request.messages if m.role != "system"
        ],
        "temperature": request.temperature,
    }
    if system:
        body["system"] = "\n\n".join(system)
    if fmt is not None:
        body["output_config"] = {"format": fmt}
    return body


def output_format(request: ChatRequest) -> dict[str, Any]:
    """``output_config.format`` for the request's schema, in the form the API takes."""
    from anthropic import transform_schema

    return {"type": "json_schema", "schema": transform_schema(dict(request.schema or {}))}


def message_response(reply: Any, request: ChatRequest | None) -> ChatResponse:
    """The answer in a Messages API reply (an SDK ``Message``, from a call or a batch result):
    its text blocks joined, its usage (estimated when absent), its ``stop_reason`` as
    ``finish_reason``, any secret's value it echoes redacted.

    Raises :class:`CallFailed` when the reply is not a message (a 200 from a proxy): no
    ``content`` list, or a text block whose text is not a string. It is never cached."""
    content = getattr(reply, "content", None)
    if not isinstance(content, list):
        raise CallFailed(f"the server answered without a message: {_shown(reply)}")
    texts = [getattr(block, "text", None) for block in content if _type(block) == "text"]
    if not all(isinstance(t, str) for t in texts):
        raise CallFailed(f"the server answered a text block without text: {_shown(reply)}")
    text = redact("".join(texts), patterns=False)
    stop = getattr(reply, "stop_reason", None) or "end_turn"
    finish = FINISH_REASONS.get(stop, stop)
    usage = getattr(reply, "usage", None)
    if usage is not None and getattr(usage, "input_tokens", None) is not None:
        return ChatResponse(
            text, usage.input_tokens, usage.output_tokens or 0, finish_reason=finish
        )
    prompt_text = " ".join(m.content for m in request.messages) if request else ""
    return ChatResponse(
        text, estimate_tokens(prompt_text), estimate_tokens(text), finish_reason=finish
    )


def _type(block: Any) -> Any:
    return block.get("type") if isinstance(block, dict) else getattr(block, "type", None)


def refuses_schema(reason: str) -> bool:
    """Whether a refused call names the structured-output parameter (an HTTP 400, or a batch
    request's ``invalid_request_error``, about ``output_config.format``)."""
    lowered = reason.lower()
    return reason.startswith(REFUSALS) and any(
        word in lowered
        for word in ("output_config", "output_format", "structured output", "json_schema")
    )


def error_message(exc: Any) -> str:
    """The server's message (``{"type": "error", "error": {"type", "message"}}``), redacted
    before it is cut to 300 characters."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        detail = error.get("message") or error if isinstance(error, dict) else error or body
        return redact(str(detail))[:300]
    return redact(str(exc))[:300]


def _shown(reply: Any) -> str:
    """What came instead of a message, redacted and cut to 200 characters."""
    dump = getattr(reply, "model_dump_json", None)
    try:
        text = dump(warnings=False) if dump is not None else repr(reply)
    except Exception:
        text = repr(reply)
    return redact(text)[:200]
