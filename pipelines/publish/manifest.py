"""``benchsmith.json``: what a published version holds, and the content hash that identifies it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith_scoring.tokens import Tokenizer, TokenizerSpec

MANIFEST = "benchsmith.json"


@dataclass(frozen=True)
class Manifest:
    """The data files of an export, their hashes, and the hash of them all; the tokenizers its
    ``tokens`` columns count in."""

    name: str
    version: str
    content_sha256: str
    files: dict[str, dict[str, Any]]
    toolkit_version: str
    git_commit: str
    tokenizers: list[dict[str, Any]] = field(default_factory=list)
    """Per tokenizer, in the order of the ``tokens`` fields: its ``name``, ``framing`` and what
    it is (``encoding``: an OpenAI encoding, or ``tokenizer_json_sha256``)."""

    def to_json(self) -> str:
        """Stable JSON (sorted keys)."""
        return json.dumps(self.__dict__, indent=2, sort_keys=True) + "\n"


def file_sha256(path: Path) -> str:
    """sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def published_files(folder: Path) -> list[Path]:
    """Every file of an export, sorted, leaving out hidden ones (scratch parts, upload caches)."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def tokenizer_records(specs: Sequence[str], loaded: Sequence[Tokenizer]) -> list[dict[str, Any]]:
    """The manifest's record of each tokenizer: name, framing, and its OpenAI encoding or the
    sha256 of its tokenizer.json (never its path)."""
    records = []
    for text, tokenizer in zip(specs, loaded, strict=False):
        spec = TokenizerSpec.parse(text)
        what = (
            {"encoding": spec.encoding}
            if spec.path is None
            else {"tokenizer_json_sha256": file_sha256(spec.path)}
        )
        records.append({"name": tokenizer.name, "framing": tokenizer.framing, **what})
    return records


def build_manifest(
    folder: Path,
    name: str,
    version: str,
    toolkit_version: str,
    git_commit: str,
    tokenizers: Sequence[dict[str, Any]] = (),
) -> Manifest:
    """Hash every Parquet shard of an export; the content hash covers data, not the card.

    Two builds with the same rows and features have the same content hash, whatever their card
    says, so re-publishing them is a no-op; any changed row gives a new hash.
    """
    files = {
        str(p.relative_to(folder)): {"sha256": file_sha256(p), "bytes": p.stat().st_size}
        for p in published_files(folder)
        if p.suffix == ".parquet"
    }
    content = hashlib.sha256(
        json.dumps({k: v["sha256"] for k, v in files.items()}, sort_keys=True).encode()
    ).hexdigest()
    return Manifest(name, version, content, files, toolkit_version, git_commit, list(tokenizers))


def read_manifest(folder: Path) -> Manifest:
    """Read ``folder/benchsmith.json``."""
    from pipelines.errors import MissingInputError

    path = folder / MANIFEST
    if not path.is_file():
        raise MissingInputError(f"{path}: not an export folder (no manifest)", path)
    return Manifest(**json.loads(path.read_text("utf-8")))
