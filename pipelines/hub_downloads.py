"""Whether models and datasets may be downloaded from the Hugging Face Hub at run time.

Off by default: a model setting names a local folder, an encoder shipped offline (MiniLM), or a
hub id already in the local Hugging Face cache; a QA dataset setting names a local folder.
``BENCHSMITH_HUB_DOWNLOADS=1`` opts in to downloads, for live rebuilds with other encoders or QA
datasets.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "BENCHSMITH_HUB_DOWNLOADS"


def allowed() -> bool:
    """True when the user opted in to Hub downloads."""
    return os.environ.get(ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def local_only(source: str) -> bool:
    """Whether loading ``source`` must not touch the network (``local_files_only``)."""
    return not allowed() and not Path(source).exists()


def hint(source: str) -> str:
    """What to do when ``source`` was not found locally with downloads off ('' otherwise)."""
    if not local_only(source):
        return ""
    return (
        f"; {source!r} is not a local folder (nor, for a model, in the local Hugging Face "
        f"cache) and Hub downloads are off: point the setting at a local folder, or set {ENV}=1"
    )
