"""The ``template`` backend: deterministic offline answers from registered responders, no model.

Each prompt that may run offline has a responder, a pure function from the prompt's variables to
the answer text (usually JSON). Builders provide them next to the logic they stand in for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pipelines.errors import LLMError
from pipelines.llm.backends.base import Backend, estimate_tokens
from pipelines.llm.records import ChatRequest, ChatResponse

Responder = Callable[[Mapping[str, Any]], str]


class TemplateBackend(Backend):
    """Answer each request with the responder registered for its prompt."""

    name = "template"

    def __init__(
        self, responders: Mapping[str, Responder], model: str = "template", cacheable: bool = False
    ):
        self.responders = dict(responders)
        self.model = model
        # free, so not cached unless asked (llm.cache_template): a rebuild then counts new asks
        self.cacheable = cacheable

    def complete(self, request: ChatRequest) -> ChatResponse:
        responder = self.responders.get(request.prompt)
        if responder is None:
            known = ", ".join(sorted(self.responders)) or "none"
            raise LLMError(
                f"the template backend cannot answer prompt {request.prompt!r} (it answers: "
                f"{known}); set llm.backend: openai for it"
            )
        text = responder(request.variables)
        prompt_text = " ".join(m.content for m in request.messages)
        return ChatResponse(text, estimate_tokens(prompt_text), estimate_tokens(text))
