"""Path types for settings: relative paths are taken from the directory of ``params.yaml``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, ValidationInfo


def _is_file(path: Path, info: ValidationInfo) -> Path:
    root = (info.context or {}).get("root")
    resolved = path if path.is_absolute() or root is None else Path(root) / path
    if not resolved.exists():
        raise ValueError(f"file not found: {path}")
    if not resolved.is_file():
        raise ValueError(f"not a file: {path}")
    return resolved


def _from_root(path: Path, info: ValidationInfo) -> Path:
    root = (info.context or {}).get("root")
    return path if path.is_absolute() or root is None else Path(root) / path


InputFile = Annotated[Path, AfterValidator(_is_file)]
"""A file that must exist; relative paths are taken from the directory of ``params.yaml``."""
ProjectPath = Annotated[Path, AfterValidator(_from_root)]
"""A path that may not exist yet; relative paths are taken from ``params.yaml``'s directory."""
