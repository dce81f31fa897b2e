"""One LLM layer for every model call: backends, response cache, prompts, validated answers."""

from pipelines.llm.backends import Backend, CallFailed, Responder, TemplateBackend, TransientError
from pipelines.llm.cache import ResponseCache
from pipelines.llm.client import Ask, LLMClient, Outcome
from pipelines.llm.prompts import PromptLibrary
from pipelines.llm.records import ChatRequest, ChatResponse, Message
from pipelines.llm.settings import LLMSettings
from pipelines.llm.structured import AnswerError, Limits, TextAnswer, find_json, parse_answer

__all__ = [
    "AnswerError",
    "Ask",
    "Backend",
    "CallFailed",
    "ChatRequest",
    "ChatResponse",
    "LLMClient",
    "LLMSettings",
    "Limits",
    "Message",
    "Outcome",
    "PromptLibrary",
    "Responder",
    "ResponseCache",
    "TemplateBackend",
    "TextAnswer",
    "TransientError",
    "find_json",
    "parse_answer",
]
