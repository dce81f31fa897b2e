"""Token counts in an evaluated model's tokenizer, for what a harness sends: the prompt, framed
as that model's chat, plus the reference answer.

A tokenizer is named by a string:

- an OpenAI encoding (``cl100k_base``, ``o200k_base``), read from the ``bpe-openai`` package,
  which embeds them (tiktoken downloads its files at first use; these work offline; bpe-openai's
  older ones, gpt2, r50k and p50k, need tiktoken's downloads and are not offered);
- a Hugging Face ``tokenizer.json`` path (read with ``tokenizers``), named by its folder;
- either of those as ``NAME=SPEC``, to choose the name (``smollm2=models/smol/tokenizer.json``).

The chat framing, which :attr:`Tokenizer.framing` names:

- ``openai-chat``: OpenAI's documented message accounting for its chat models (each message
  costs 3 tokens plus its role and content, and the reply is primed with 3 more; the OpenAI
  Cookbook's "How to count tokens with tiktoken");
- ``chat-template``: the chat template beside a ``tokenizer.json`` (``chat_template.jinja``, or
  ``chat_template`` in ``tokenizer_config.json``), rendered for the messages with the
  generation prompt, in a sandbox as transformers renders it;
- ``none``: the prompt's own tokens (a ``tokenizer.json`` without a template).

Long texts are counted a line at a time. A regex-split BPE (the OpenAI encodings, GPT-2, Llama 3,
SmolLM2) never joins a line's last characters and the next line's first into one piece, so a
text cut at line starts counts as the sum of its lines; each line's count is remembered, so a
passage that recurs across levels and variants is counted once. Where exactly a line starts
depends on the tokenizer's split pattern: cl100k-style patterns keep a run of line breaks with
the line before, GPT-2-style ones give the last break to the line after. :data:`BOUNDARIES`
holds both cuts; a tokenizer is counted by the first one for which every probe text
(:data:`PROBES`) sums to its whole count, and whole when none does (a SentencePiece model that
prefixes every piece).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

OPENAI_ENCODINGS = ("cl100k_base", "o200k_base")
OPENAI_MESSAGE_TOKENS = 3
"""Tokens OpenAI's chat format adds per message, and again to prime the reply."""
LINE_START = re.compile(r"\n(?=[^\s/])")
"""A line break followed by a character that no split pattern joins to the breaks before it (not
a space, and not ``/``, which o200k's punctuation pieces take across a line break)."""


@dataclass(frozen=True)
class Boundary:
    """Where a text is cut for counting by lines, at each :data:`LINE_START`: after the break
    (cl100k-style patterns keep a run of breaks with the line before) or before it (GPT-2-style
    ones give a run's last break to the line after)."""

    name: str
    after: bool

    def cuts(self, text: str) -> Iterator[int]:
        """The offsets where ``text`` is cut (never 0 nor its length)."""
        for match in LINE_START.finditer(text):
            at = match.end() if self.after else match.start()
            if at:
                yield at


BOUNDARIES = (Boundary("after the line break", True), Boundary("before the line break", False))
"""The cuts tried, in order, when a tokenizer loads."""
WORD_BOUNDARY = re.compile(r"(?<=[^\s])(?= [^\s])")
"""Where an over-long line is cut further: before a space that starts a word."""
MAX_PIECE_CHARS = 100_000
"""The longest piece encoded at once (``bpe-openai`` refuses a million characters)."""
MEMO_LINES = 1 << 18
"""Lines whose counts are remembered, per tokenizer."""
PROBES = (
    "Alpha beta, gamma.\n\n### Passage 2\nDelta (epsilon) zeta 1,234.5 km.\n  indented\nx",
    "The river rose.\nIt fell again;\n\n\nnumbers 2026-11-28 and 3.14\n- a list\n# heading",
    "中文文本。\n第二行\n  空格\nÜber café naïve — “quoted” text.\n\tTabbed\nend",
    "a =.\n/&gt; [[Link]] ''it''\n|}\n{{cite|url=x}}\n<ref>y</ref>\n*item\n:indent",
)
"""Texts on which counting by lines must equal counting whole, for a tokenizer to be counted
by lines."""


class TokenizerError(ValueError):
    """A tokenizer that cannot be loaded; the message names it and, for a file, its path."""


@dataclass(frozen=True)
class TokenizerSpec:
    """A tokenizer as a settings string names it: ``name``, and its OpenAI ``encoding`` or the
    ``path`` of its tokenizer.json."""

    name: str
    encoding: str | None = None
    path: Path | None = None

    @classmethod
    def parse(cls, text: str, root: Path | None = None) -> TokenizerSpec:
        """``cl100k_base``, ``path/to/tokenizer.json`` or ``NAME=SPEC``; a relative path is read
        from ``root`` (the working folder when None). Raises :class:`TokenizerError`."""
        name, sep, spec = text.partition("=")
        if not sep:
            name, spec = "", text
        name, spec = name.strip(), spec.strip()
        if spec in OPENAI_ENCODINGS:
            return cls(name or spec, encoding=spec)
        if not (spec.endswith(".json") or "/" in spec):
            raise TokenizerError(
                f"tokenizer {text!r}: not an OpenAI encoding ({', '.join(OPENAI_ENCODINGS)}) "
                "nor a tokenizer.json path"
            )
        path = Path(spec)
        if root is not None and not path.is_absolute():
            path = root / path
        if path.is_dir():
            path = path / "tokenizer.json"
        return cls(name or path.parent.name, path=path)

    def __str__(self) -> str:
        spec = self.encoding or str(self.path)
        return spec if spec == self.name else f"{self.name}={spec}"


@dataclass
class Tokenizer:
    """A loaded tokenizer: exact token counts of texts and of harness requests."""

    name: str
    framing: str
    """``openai-chat``, ``chat-template`` or ``none`` (module docstring)."""
    encode: Callable[[str], list[int]] = field(repr=False)
    """Token ids of a piece of text (no special tokens added; special-token text is parsed only
    by a chat template's tokenizer)."""
    decode: Callable[[list[int]], str] = field(repr=False)
    boundary: Boundary | None = field(default=None, repr=False)
    """Where texts are cut to count them a line at a time (None: counted whole), chosen from
    :data:`BOUNDARIES` on :data:`PROBES` when loaded."""
    template: Callable[[list[Mapping[str, str]]], str] | None = field(default=None, repr=False)
    """The chat template rendered for messages with the generation prompt (``chat-template``
    framing)."""

    def __post_init__(self) -> None:
        self._line = lru_cache(maxsize=MEMO_LINES)(lambda line: len(self.encode(line)))
        self.boundary = next(
            (b for b in BOUNDARIES if all(self._summed(p, b) == self._whole(p) for p in PROBES)),
            None,
        )

    def count(self, text: str) -> int:
        """Tokens of ``text`` alone."""
        return self._whole(text) if self.boundary is None else self._summed(text, self.boundary)

    def count_prompt(self, prompt: str | Sequence[Mapping[str, str]]) -> int:
        """Tokens of ``prompt`` as a chat request, framed as :attr:`framing` says: a string is
        one user message; a list is OpenAI-style messages (``role``, ``content``)."""
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        if self.framing == "openai-chat":
            per_message = (
                OPENAI_MESSAGE_TOKENS + self._line(m["role"]) + self.count(m["content"])
                for m in messages
            )
            return sum(per_message) + OPENAI_MESSAGE_TOKENS
        if self.template is not None:
            return self.count(self.template(list(messages)))
        return sum(self.count(m["content"]) for m in messages)

    def count_request(self, prompt: str | Sequence[Mapping[str, str]], answer: str | None) -> int:
        """Tokens of a harness request: the framed prompt plus the reference answer."""
        return self.count_prompt(prompt) + (self.count(answer) if answer else 0)

    def ids(self, text: str) -> list[int]:
        """Token ids of ``text`` (pieces encoded apart when counted by lines)."""
        if self.boundary is None:
            return self.encode(text)
        return [i for piece in pieces(text, self.boundary) for i in self.encode(piece)]

    def _summed(self, text: str, boundary: Boundary) -> int:
        return sum(self._line(piece) for piece in pieces(text, boundary))

    def _whole(self, text: str) -> int:
        return len(self.encode(text)) if text else 0


def pieces(text: str, boundary: Boundary) -> Iterator[str]:
    """``text`` cut at ``boundary``, lines longer than :data:`MAX_PIECE_CHARS` cut further at
    :data:`WORD_BOUNDARY`; the pieces join back to ``text``."""
    start = 0
    for end in (*boundary.cuts(text), len(text)):
        if end - start <= MAX_PIECE_CHARS:
            if end > start:
                yield text[start:end]
        else:
            yield from _words(text[start:end])
        start = end


def _words(line: str) -> Iterator[str]:
    """An over-long line cut at :data:`WORD_BOUNDARY` into pieces of about
    :data:`MAX_PIECE_CHARS`."""
    start = 0
    for match in WORD_BOUNDARY.finditer(line):
        if match.start() - start >= MAX_PIECE_CHARS:
            yield line[start : match.start()]
            start = match.start()
    yield line[start:]


def load(spec: str | TokenizerSpec, root: Path | None = None) -> Tokenizer:
    """The tokenizer ``spec`` names (loaded once per process). Raises :class:`TokenizerError`
    naming the tokenizer and the file."""
    parsed = spec if isinstance(spec, TokenizerSpec) else TokenizerSpec.parse(spec, root)
    return _load(parsed)


def load_all(specs: Sequence[str], root: Path | None = None) -> list[Tokenizer]:
    """Several tokenizers; two with the same name are refused."""
    loaded = [load(s, root) for s in specs]
    names = [t.name for t in loaded]
    if len(set(names)) != len(names):
        raise TokenizerError(f"tokenizer names repeat: {names}; name them with NAME=SPEC")
    return loaded


@lru_cache(maxsize=16)
def _load(spec: TokenizerSpec) -> Tokenizer:
    if spec.encoding is not None:
        return _openai(spec)
    return _hugging_face(spec)


def _openai(spec: TokenizerSpec) -> Tokenizer:
    try:
        import bpe_openai
    except ImportError as exc:
        raise TokenizerError(
            f"tokenizer {spec.name!r}: OpenAI encodings need the package bpe-openai "
            "(pip install bpe-openai)"
        ) from exc
    encoding = bpe_openai.get_encoding(spec.encoding)
    return Tokenizer(spec.name, "openai-chat", encoding.encode_ordinary, encoding.decode)


def _hugging_face(spec: TokenizerSpec) -> Tokenizer:
    path = spec.path
    assert path is not None
    try:
        from tokenizers import Tokenizer as HFTokenizer
    except ImportError as exc:
        raise TokenizerError(
            f"tokenizer {spec.name!r} ({path}): reading tokenizer.json needs the package "
            "tokenizers (pip install tokenizers)"
        ) from exc
    if not path.is_file():
        raise TokenizerError(f"tokenizer {spec.name!r}: no tokenizer file at {path}")
    try:
        backend = HFTokenizer.from_file(str(path))
    except Exception as exc:  # the Rust loader raises a bare Exception
        raise TokenizerError(
            f"tokenizer {spec.name!r}: {path} is not a readable tokenizer.json ({exc})"
        ) from exc
    template = chat_template(path.parent)

    def encode(text: str) -> list[int]:
        return list(backend.encode(text, add_special_tokens=False).ids)

    def decode(ids: list[int]) -> str:
        return str(backend.decode(ids, skip_special_tokens=False))

    framing = "chat-template" if template else "none"
    return Tokenizer(spec.name, framing, encode, decode, template=template)


def chat_template(folder: Path) -> Callable[[list[Mapping[str, str]]], str] | None:
    """The chat template in ``folder`` (``chat_template.jinja`` or ``tokenizer_config.json``'s
    ``chat_template``) as a function of the messages, or None when it has none."""
    config_file = folder / "tokenizer_config.json"
    config: dict[str, Any] = (
        json.loads(config_file.read_text("utf-8")) if config_file.is_file() else {}
    )
    source = config.get("chat_template")
    if (folder / "chat_template.jinja").is_file():
        source = (folder / "chat_template.jinja").read_text("utf-8")
    if isinstance(source, list):  # named templates: the default one
        source = next((t["template"] for t in source if t.get("name") == "default"), None)
    if not source:
        return None
    template = _environment().from_string(source)
    specials = {k: _token_text(config.get(k)) for k in ("bos_token", "eos_token", "pad_token")}

    def frame(messages: list[Mapping[str, str]]) -> str:
        return str(template.render(messages=messages, add_generation_prompt=True, **specials))

    return frame


def _token_text(value: Any) -> str:
    """A special token as tokenizer_config.json gives it: a string, or ``{"content": ...}``."""
    if isinstance(value, dict):
        return str(value.get("content", ""))
    return "" if value is None else str(value)


@lru_cache(maxsize=1)
def _environment() -> Any:
    """A sandboxed Jinja environment set up as transformers renders chat templates."""
    from jinja2.exceptions import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    environment.filters["tojson"] = lambda x, indent=None: json.dumps(
        x, ensure_ascii=False, indent=indent
    )
    environment.globals["raise_exception"] = raise_exception
    return environment
