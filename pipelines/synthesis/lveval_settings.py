"""The ``lveval`` stage's settings: the builder's, with the reviewed-rules file checked when
``params.yaml`` loads (relative to its folder)."""

from __future__ import annotations

from pydantic import Field

from builders.lveval.settings import KPRSettings, LVEvalSettings
from pipelines.paths import InputFile


class KPRFiles(KPRSettings):
    """KPR settings whose ``rules_file`` must exist."""

    rules_file: InputFile | None = Field(
        None,
        description=(
            "Reviewed rules (JSONL of orig, repl, scope) overriding proposals; must exist, "
            "relative to params.yaml. Unset: no reviewed rules."
        ),
    )


class LVEvalStageSettings(LVEvalSettings):
    """The ``lveval`` key of ``params.yaml``."""

    kpr: KPRFiles = Field(default_factory=KPRFiles)
