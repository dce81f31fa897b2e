"""An OpenAI-compatible chat server for tests that enforces ``response_format``.

One causal language model loaded with transformers (CPU, float32) answers
``POST /v1/chat/completions`` (non-streaming), one request at a time. Generation is greedy at
temperature 0; a higher temperature samples, seeded with the request's ``seed``. With
``response_format: json_schema`` (or ``json_object``) every token is chosen among those that keep
the answer inside the schema: llguidance compiles the schema to a grammar and masks the logits
at each step. Near ``max_tokens`` the answer is wrapped up (only tokens that close the JSON are
allowed once the tokens left just cover the shortest close), so it parses and matches the
schema unless even the shortest valid answer needs more tokens; a wrapped answer reports
``finish_reason: length``. ``GET /health`` and ``GET /v1/models`` answer too; errors have
OpenAI's shape (a bad schema is a 400, an unknown model a 404).

Run ``python -m tests.support.constrained_server --model DIR --host 127.0.0.1 --port N``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import threading
import time
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import llguidance
import llguidance.hf
import llguidance.numpy
import numpy as np
import torch
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GenerationConfig,
    LogitsProcessor,
    LogitsProcessorList,
    StoppingCriteria,
    StoppingCriteriaList,
)

log = logging.getLogger("constrained_server")

ANY_OBJECT: dict[str, Any] = {"type": "object"}
"""The schema ``response_format: json_object`` is held to."""
LOGGED_CHARS = 300
"""How much of each answer the log shows."""
WRAP_MARGIN = 2
"""Spare tokens kept when deciding to wrap an answer up (a closer may need one more)."""
NEAR_SLACK = 64
"""Spare tokens under which the budget is checked at every step (else every few steps)."""
RECHECK_EVERY = 8
"""Steps between budget checks while the answer is far from its ``max_tokens``."""
CLOSE_LIMIT = 512
"""The longest close of an answer that is looked for."""
JSON_OPTIONS = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
"""JSON laid out as json.dumps and the prompts' examples write it, with no other whitespace: a
small model cannot spend its budget on endless blank lines."""


class ServerError(Exception):
    """A request the server refuses, with OpenAI's error fields."""

    def __init__(self, status: int, message: str, kind: str, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.code = status, message, kind, code

    def response(self) -> JSONResponse:
        """The error as OpenAI sends it."""
        error = {"message": self.message, "type": self.kind, "param": None, "code": self.code}
        return JSONResponse({"error": error}, status_code=self.status)


def bad_request(message: str, code: str | None = None) -> ServerError:
    """HTTP 400, ``invalid_request_error``."""
    return ServerError(400, message, "invalid_request_error", code)


@dataclass(frozen=True)
class Generation:
    """One completion: its text, token counts, why it ended and how long it took."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: Literal["stop", "length"]
    seconds: float


@dataclass
class Scan:
    """Where JSON text stands lexically: inside a string, and just after a backslash."""

    in_string: bool = False
    escaped: bool = False

    def feed(self, text: bytes) -> None:
        """Advance over ``text``."""
        for byte in text:
            if self.escaped:
                self.escaped = False
            elif self.in_string and byte == ord("\\"):
                self.escaped = True
            elif byte == ord('"'):
                self.in_string = not self.in_string

    def copy(self) -> Scan:
        """An independent copy."""
        return Scan(self.in_string, self.escaped)


class Closers:
    """Tokens that close JSON structure, best first. Inside a string: a quote followed only by
    ``]`` and ``}``, then a quote followed by any punctuation. Outside: ``]`` and ``}`` only,
    then a lone quote (a string the schema still needs), then any punctuation."""

    def __init__(self, tokenizer: llguidance.LLTokenizer):
        self.texts = [tokenizer.decode_bytes([i]) for i in range(tokenizer.vocab_size)]
        self.inside = [self._match(rb'"[\]}]*'), self._match(rb'"[\]},:" ]*')]
        self.outside = [self._match(rb"[\]}]+"), self._match(rb'"'), self._match(rb'[\]},:" ]+')]

    def _match(self, pattern: bytes) -> np.ndarray:
        full = re.compile(pattern)
        return np.array([full.fullmatch(t) is not None for t in self.texts])

    def shortest(self, allowed: np.ndarray, scan: Scan) -> np.ndarray:
        """``allowed`` narrowed to its best-ranked closers, or unchanged if none is allowed."""
        if scan.escaped:
            return allowed
        for rank in self.inside if scan.in_string else self.outside:
            best = allowed & rank
            if best.any():
                return best
        return allowed


def allowed_tokens(matcher: llguidance.LLMatcher, bitmask: np.ndarray) -> np.ndarray:
    """The matcher's next-token mask as one bool per token."""
    llguidance.numpy.fill_next_token_bitmask(matcher, bitmask)
    return np.unpackbits(bitmask.view(np.uint8), bitorder="little").astype(bool)


class SchemaMask(LogitsProcessor):
    """Masks every token the llguidance matcher would reject; once the grammar is complete
    only end-of-sequence remains, so generation stops there.

    Near ``max_tokens`` the answer is wrapped up: when the tokens left barely cover the
    shortest way to close the JSON (found by walking the grammar with :class:`Closers`), only
    the best-ranked closers are allowed from then on, so the answer still parses instead of
    being cut off mid-string.
    """

    def __init__(
        self,
        matcher: llguidance.LLMatcher,
        closers: Closers,
        *,
        prompt_len: int,
        max_tokens: int,
        eos: int,
    ):
        self.matcher = matcher
        self.closers = closers
        self.start = prompt_len
        self.max_tokens = max_tokens
        self.eos = eos
        self.consumed = 0
        self.scan = Scan()
        self.wrapped = False
        self.next_check = 0
        self.bitmask = llguidance.numpy.allocate_token_bitmask(1, len(closers.texts))

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        for token in input_ids[0, self.start + self.consumed :].tolist():
            self.matcher.consume_token(token)
            self.scan.feed(self.closers.texts[token])
            self.consumed += 1
        vocab = scores.shape[-1]
        allowed = np.zeros(vocab, dtype=bool)
        if self.matcher.is_error():
            log.warning("grammar error, ending the answer: %s", self.matcher.get_error())
            allowed[self.eos] = True
        elif self.matcher.is_stopped():
            allowed[self.eos] = True
        else:
            mask = allowed_tokens(self.matcher, self.bitmask)
            if not self.wrapped and self.consumed >= self.next_check:
                self._check_budget()
            if self.wrapped:
                mask = self.closers.shortest(mask, self.scan)
            n = min(vocab, len(mask))
            allowed[:n] = mask[:n]
        return scores.masked_fill(~torch.from_numpy(allowed), float("-inf"))

    def _check_budget(self) -> None:
        """Wrap up when the tokens left (this one included) only just cover the shortest
        close and end-of-sequence; look again next step when close to that, else later."""
        slack = self.max_tokens - self.consumed - self.closing_steps() - 1 - WRAP_MARGIN
        self.wrapped = slack <= 0
        self.next_check = self.consumed + (1 if slack <= NEAR_SLACK else RECHECK_EVERY)

    def closing_steps(self) -> int:
        """Tokens the shortest close of the answer takes from here (:data:`CLOSE_LIMIT` if it
        takes that many or more): the grammar alone, closers first, else the lowest token id."""
        walk, scan = self.matcher.deep_copy(), self.scan.copy()
        for steps in range(CLOSE_LIMIT):
            if walk.is_accepting() or walk.is_stopped():
                return steps
            choice = self.closers.shortest(allowed_tokens(walk, self.bitmask), scan)
            token = int(np.flatnonzero(choice)[0]) if choice.any() else -1
            if token < 0 or not walk.consume_token(token):
                break
            scan.feed(self.closers.texts[token])
        return CLOSE_LIMIT


class Cancelled(StoppingCriteria):
    """Ends generation early when the client has gone away."""

    def __init__(self, event: threading.Event):
        self.event = event

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor, **kwargs: Any) -> Any:
        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool)


def quantized(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` with its linear layers' weights in int8 (dynamic quantization: activations
    quantized per step). Decoding a 135M model on one core is bound by reading the weights:
    about 2.7 times as fast as float32 here; the greedy answers differ in places."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (DeprecationWarning, UserWarning))
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


class Engine:
    """The model, its tokenizer and llguidance's view of the tokenizer; one generation at a
    time."""

    def __init__(self, model_dir: Path, *, int8: bool = False):
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        self.model.eval()
        if int8:
            self.model = quantized(self.model)
        self.ll_tokenizer = llguidance.hf.from_tokenizer(self.tokenizer)
        self.closers = Closers(self.ll_tokenizer)
        self.eos = int(self.tokenizer.eos_token_id)
        self.context = int(getattr(self.model.config, "max_position_embeddings", 2048))
        self.lock = threading.Lock()

    def grammar(self, schema: dict[str, Any]) -> str:
        """The llguidance grammar of a JSON schema; :class:`ServerError` 400 when invalid."""
        try:
            grammar = llguidance.LLMatcher.grammar_from_json_schema(schema, defaults=JSON_OPTIONS)
        except ValueError as exc:
            raise bad_request(f"Invalid schema for response_format: {exc}") from None
        is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(
            grammar, self.ll_tokenizer
        )
        if is_error:
            raise bad_request(f"Invalid schema for response_format: {'; '.join(messages)}")
        return grammar

    def encode(self, messages: list[dict[str, str]]) -> list[int]:
        """The prompt's token ids: the chat template with the assistant's turn opened."""
        text = self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def generate(
        self,
        prompt: list[int],
        max_tokens: int,
        *,
        temperature: float = 0.0,
        seed: int | None = None,
        grammar: str | None = None,
        cancel: threading.Event | None = None,
        min_tokens: int = 0,
    ) -> Generation:
        """Up to ``max_tokens`` new tokens after ``prompt``, inside ``grammar`` when given;
        without a grammar, at least ``min_tokens`` (end-of-sequence held back until then)."""
        cancel = cancel or threading.Event()
        with self.lock:
            t0 = time.monotonic()
            if cancel.is_set():
                return Generation("", len(prompt), 0, "stop", 0.0)
            mask = None
            if grammar is not None:
                matcher = llguidance.LLMatcher(self.ll_tokenizer, grammar)
                mask = SchemaMask(
                    matcher, self.closers, prompt_len=len(prompt), max_tokens=max_tokens,
                    eos=self.eos,
                )  # fmt: skip
            if temperature > 0:
                torch.manual_seed(seed or 0)
            ids = torch.tensor([prompt])
            with torch.inference_mode():
                out = self.model.generate(
                    input_ids=ids,
                    attention_mask=torch.ones_like(ids),
                    generation_config=self._config(
                        max_tokens, temperature, 0 if grammar else min_tokens
                    ),
                    logits_processor=LogitsProcessorList([mask] if mask is not None else []),
                    stopping_criteria=StoppingCriteriaList([Cancelled(cancel)]),
                )
            new = out[0, len(prompt) :].tolist()
            seconds = time.monotonic() - t0
        ended = bool(new) and new[-1] == self.eos
        whole = ended and (mask is None or not (mask.wrapped or mask.matcher.is_error()))
        text = self.tokenizer.decode(new[:-1] if ended else new, skip_special_tokens=True)
        reason: Literal["stop", "length"] = "stop" if whole or cancel.is_set() else "length"
        return Generation(text, len(prompt), len(new), reason, seconds)

    def _config(self, max_tokens: int, temperature: float, min_tokens: int) -> GenerationConfig:
        """Greedy at temperature 0, else sampling at ``temperature`` over the whole vocabulary."""
        sample = temperature > 0
        return GenerationConfig(
            max_new_tokens=max_tokens,
            min_new_tokens=min_tokens,
            do_sample=sample,
            temperature=temperature if sample else None,
            top_p=None,
            top_k=None,
            eos_token_id=self.eos,
            pad_token_id=self.eos,
        )


class Message(BaseModel):
    """A chat message; content parts of type ``text`` are joined."""

    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[dict[str, Any]]

    def text(self) -> str:
        """The message's text."""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.get("text", "") for p in self.content if p.get("type") == "text")


class JsonSchema(BaseModel):
    """``response_format.json_schema``."""

    model_config = ConfigDict(populate_by_name=True)

    name: str = "answer"
    schema_: dict[str, Any] = Field(default_factory=dict, alias="schema")
    strict: bool | None = None


class ResponseFormat(BaseModel):
    """``response_format``: text, any JSON object, or a JSON schema."""

    type: Literal["text", "json_object", "json_schema"] = "text"
    json_schema: JsonSchema | None = None


class ChatRequest(BaseModel):
    """The fields of a chat completion request this server reads; others are ignored."""

    model: str
    messages: list[Message] = Field(min_length=1)
    max_tokens: int | None = Field(None, gt=0)
    max_completion_tokens: int | None = Field(None, gt=0)
    temperature: float = Field(0.0, ge=0, le=2)
    seed: int | None = None
    n: int = 1
    stream: bool = False
    response_format: ResponseFormat | None = None


def schema_of(fmt: ResponseFormat | None) -> dict[str, Any] | None:
    """The JSON schema the answer is held to, or ``None`` for free text."""
    if fmt is None or fmt.type == "text":
        return None
    if fmt.type == "json_object":
        return ANY_OBJECT
    if fmt.json_schema is None or not fmt.json_schema.schema_:
        raise bad_request("response_format json_schema needs json_schema.schema")
    return fmt.json_schema.schema_


def completion(request: ChatRequest, result: Generation) -> dict[str, Any]:
    """The ``chat.completion`` object for ``result``."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": result.text},
                "finish_reason": result.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "total_tokens": result.prompt_tokens + result.completion_tokens,
        },
    }


async def _until_done_or_gone(task: asyncio.Future[Any], request: Request, cancel: Any) -> None:
    """Wait for ``task``; set ``cancel`` if the client disconnects first."""
    while not task.done():
        await asyncio.wait({task}, timeout=0.5)
        if not task.done() and await request.is_disconnected():
            cancel.set()
            log.info("client went away; generation cancelled")
            break


def middle_cut(engine: Engine, messages: list[dict[str, str]], limit: int) -> list[int]:
    """The prompt of ``messages``, the middle of the last message cut (LV-Eval's truncation)
    until the whole prompt takes at most ``limit`` tokens."""
    prompt = engine.encode(messages)
    if len(prompt) <= limit:
        return prompt
    last = engine.tokenizer(messages[-1]["content"], add_special_tokens=False)["input_ids"]
    keep = max(len(last) - (len(prompt) - limit), 0)
    head, tail = keep // 2, keep - keep // 2
    ids = last[:head] + (last[len(last) - tail :] if tail else [])
    cut = {**messages[-1], "content": engine.tokenizer.decode(ids)}
    return engine.encode([*messages[:-1], cut])[: limit + 8]


def replay_key(body: ChatRequest) -> str | None:
    """What makes a greedy request's answer (``None`` for a sampled one)."""
    if body.temperature > 0:
        return None
    return json.dumps(
        [
            [(m.role, m.text()) for m in body.messages],
            body.max_completion_tokens or body.max_tokens,
            body.response_format.model_dump() if body.response_format else None,
        ]
    )


def create_app(
    engine: Engine, names: set[str], max_prompt_tokens: int | None = None, replay: bool = False
) -> FastAPI:
    """The HTTP API over ``engine``, serving the model under ``names``.

    ``max_prompt_tokens`` cuts longer prompts in the middle of their last message (as LV-Eval
    does before asking a model); ``replay`` answers a repeated greedy request from memory, as
    a server with a prefix cache answers it again, only faster.
    """
    app = FastAPI(title="constrained test server")
    created = int(time.time())
    answered: dict[str, Generation] = {}

    @app.exception_handler(ServerError)
    async def server_error(_: Request, exc: ServerError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return bad_request(f"{where}: {first.get('msg', 'invalid request')}").response()

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        data = [
            {"id": n, "object": "model", "created": created, "owned_by": "benchsmith-tests"}
            for n in sorted(names)
        ]
        return {"object": "list", "data": data}

    @app.post("/v1/chat/completions")
    async def chat(body: ChatRequest, request: Request) -> JSONResponse:
        if body.model not in names:
            message = f"The model `{body.model}` does not exist or you do not have access to it."
            raise ServerError(404, message, "invalid_request_error", "model_not_found")
        if body.stream or body.n != 1:
            raise bad_request("only non-streaming requests with n=1 are supported")
        schema = schema_of(body.response_format)
        grammar = engine.grammar(schema) if schema is not None else None
        key = replay_key(body) if replay else None
        if key is not None and key in answered:
            log.info("replayed a repeated greedy request")
            return JSONResponse(completion(body, answered[key]))
        messages = [{"role": m.role, "content": m.text()} for m in body.messages]
        if max_prompt_tokens is not None:
            prompt = middle_cut(engine, messages, max_prompt_tokens)
        else:
            prompt = engine.encode(messages)
        budget = engine.context - len(prompt)
        max_tokens = min(body.max_completion_tokens or body.max_tokens or budget, budget)
        if max_tokens <= 0:
            raise bad_request(
                f"This model's maximum context length is {engine.context} tokens; the messages "
                f"take {len(prompt)}.",
                "context_length_exceeded",
            )
        cancel = threading.Event()
        task = asyncio.ensure_future(
            run_in_threadpool(
                engine.generate,
                prompt,
                max_tokens,
                temperature=body.temperature,
                seed=body.seed,
                grammar=grammar,
                cancel=cancel,
            )
        )
        await _until_done_or_gone(task, request, cancel)
        result = await task
        if key is not None and not cancel.is_set():
            answered[key] = result
        fmt = body.response_format.type if body.response_format else "text"
        log.info(
            "%s: %d prompt + %d completion tokens in %.2f s (%.1f tokens/s), %s: %r",
            fmt,
            result.prompt_tokens,
            result.completion_tokens,
            result.seconds,
            result.completion_tokens / max(result.seconds, 1e-9),
            result.finish_reason,
            result.text[:LOGGED_CHARS],
        )
        return JSONResponse(completion(body, result))

    return app


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="a transformers model folder")
    parser.add_argument("--name", help="the model name clients send (default: folder name)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--log-file", type=Path, help="log here as well as to stderr")
    parser.add_argument(
        "--max-prompt-tokens", type=int, help="cut longer prompts in the middle of the last message"
    )
    parser.add_argument(
        "--replay", action="store_true", help="answer a repeated greedy request from memory"
    )
    parser.add_argument(
        "--int8", action="store_true", help="quantize the linear layers' weights to int8"
    )
    return parser.parse_args(argv)


def setup_logging(log_file: Path | None) -> None:
    """Log to stderr and, when given, to ``log_file``."""
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    if log_file is not None:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s",
        handlers=handlers,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Load the model and serve until stopped."""
    import uvicorn

    args = parse_args(argv)
    setup_logging(args.log_file)
    t0 = time.monotonic()
    engine = Engine(args.model, int8=args.int8)
    name = args.name or args.model.resolve().name
    log.info(
        "loaded %s as %r in %.1f s (%d torch threads, %s linear layers)",
        args.model,
        name,
        time.monotonic() - t0,
        torch.get_num_threads(),
        "int8" if args.int8 else "float32",
    )
    app = create_app(engine, {name}, args.max_prompt_tokens, args.replay)
    uvicorn.run(app, host=args.host, port=args.port, log_config=None)


if __name__ == "__main__":
    main()
