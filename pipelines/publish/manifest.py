"""``benchsmith.json``: what a published version holds, and the content hash that identifies it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = "benchsmith.json"


@dataclass(frozen=True)
class Manifest:
    """The data files of an export, their hashes, and the hash of them all."""

    name: str
    version: str
    content_sha256: str
    files: dict[str, dict[str, Any]]
    toolkit_version: str
    git_commit: str

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


def build_manifest(
    folder: Path, name: str, version: str, toolkit_version: str, git_commit: str
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
    return Manifest(name, version, content, files, toolkit_version, git_commit)


def read_manifest(folder: Path) -> Manifest:
    """Read ``folder/benchsmith.json``."""
    from pipelines.errors import MissingInputError

    path = folder / MANIFEST
    if not path.is_file():
        raise MissingInputError(f"{path}: not an export folder (no manifest)", path)
    return Manifest(**json.loads(path.read_text("utf-8")))
