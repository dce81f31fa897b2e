"""LLM backends: ``openai`` (any OpenAI-compatible server), ``anthropic`` (Anthropic's Messages
API, :mod:`pipelines.llm.backends.anthropic_api`) and ``template`` (offline)."""

from pipelines.llm.backends.base import Backend, CallFailed, TransientError, estimate_tokens
from pipelines.llm.backends.template import Responder, TemplateBackend

__all__ = [
    "Backend",
    "CallFailed",
    "Responder",
    "TemplateBackend",
    "TransientError",
    "estimate_tokens",
]
