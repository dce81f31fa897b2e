"""The tokenizer settings type shared by ``lveval.tokenizer`` and ``publish.tokenizers``: a
tokenizer as :mod:`benchsmith_scoring.tokens` names it, checked to load when ``params.yaml``
loads (paths relative to its folder)."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, ValidationInfo

from benchsmith_scoring.tokens import TokenizerError, TokenizerSpec, load


def check_tokenizer(value: str, info: ValidationInfo) -> str:
    """A tokenizer spec that loads: a known OpenAI encoding (with its package installed; not
    loaded, which takes most of a second) or a readable tokenizer.json, its path taken from
    params.yaml's folder; returned with that path resolved."""
    root = (info.context or {}).get("root")
    spec = TokenizerSpec.parse(value, None if root is None else Path(root))
    if spec.path is not None:
        load(spec)  # reads the file: an unreadable one fails here, naming it
    elif find_spec("bpe_openai") is None:
        raise TokenizerError(
            f"tokenizer {spec.name!r}: OpenAI encodings need the package bpe-openai "
            "(pip install bpe-openai)"
        )
    return str(spec)


TokenizerText = Annotated[str, AfterValidator(check_tokenizer)]
"""A tokenizer setting, checked to load."""
