"""Every setting a message, reason or docstring names (``web.fetch.allow_addresses``) is one
``params.yaml`` has today."""

from __future__ import annotations

import ast
import re

from pipelines.dag.table import RENAMED
from pipelines.settings import Params
from pipelines.settings_hints import model_at
from tests.support.snapshot import ROOT

SECTIONS = sorted([*Params.model_fields, *RENAMED], key=len, reverse=True)
"""The top-level keys of params.yaml, today's and former ones (``sources``)."""
DOTTED = re.compile(r"(?<![\w./-])(?:" + "|".join(SECTIONS) + r")(?:\.[a-z_][a-z0-9_]*)+(?![\w/-])")
"""``section.key[.key...]`` with a top-level section of params.yaml, not inside a module path,
a file path or a host name."""

FILE_SUFFIXES = {
    *("json", "jsonl", "parquet", "md", "j2", "yaml", "py", "txt", "sqlite", "com", "example")
}
"""A last part that makes the name a file (``lveval.json``) or a host (``wiki.kidzsearch.com``,
the snapshot's archive stand-in ``web.archive.example``)."""

FORMER = {"llm.json_mode", *DOTTED.findall(" ".join(RENAMED.values()))}
"""Keys of older files that a message names on purpose, to say where they went."""


def _named_settings() -> dict[str, set[str]]:
    """Every dotted setting path in a string literal under pipelines/ and builders/, with the
    files naming it."""
    found: dict[str, set[str]] = {}
    for package in ("pipelines", "builders"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    for name in DOTTED.findall(node.value):
                        if name.rsplit(".", 1)[-1] not in FILE_SUFFIXES:
                            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def _exists(name: str) -> bool:
    *parents, key = name.split(".")
    model = model_at(Params, parents)
    return model is not None and key in model.model_fields


def test_every_setting_the_code_names_exists_in_the_params_model():
    named = _named_settings()
    assert len(named) >= 20 and "llm.json_mode" in named  # it sees messages and docstrings
    stale = {n: sorted(files) for n, files in named.items() if not _exists(n) and n not in FORMER}
    assert not stale, f"settings named in the code that params.yaml lacks: {stale}"


def test_the_scan_tells_a_stale_name_from_a_current_one():
    assert _exists("web.fetch.allow_addresses") and _exists("wiki.dump.path")
    assert not _exists("sources.fetch.allow_addresses") and not _exists("web.fetch.allow")
    assert DOTTED.findall("allow it with sources.fetch.allow_addresses") == [
        "sources.fetch.allow_addresses"
    ]
    assert DOTTED.findall("see pipelines.sources.web.settings and data/wiki.json") == []
