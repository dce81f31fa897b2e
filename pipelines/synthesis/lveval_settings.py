"""The ``lveval`` stage's settings: the builder's, with the reviewed-rules file and the tokenizer
checked when ``params.yaml`` loads (relative to its folder)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationInfo, field_validator

from benchsmith_scoring.tokens import Tokenizer, TokenizerError, load
from builders.lveval.settings import KPRSettings, LVEvalSettings
from pipelines.errors import ParamsError
from pipelines.paths import InputFile
from pipelines.tokenizer_settings import check_tokenizer


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

    @field_validator("tokenizer")
    @classmethod
    def _tokenizer(cls, value: str, info: ValidationInfo) -> str:
        return check_tokenizer(value, info)


def stage_tokenizer(settings: LVEvalSettings, root: Path) -> Tokenizer | None:
    """The tokenizer levels are counted in (``length_unit: tokens``), its path relative to
    ``root`` (the folder of params.yaml); None in word mode."""
    if settings.length_unit != "tokens":
        return None
    try:
        return load(settings.tokenizer, root)
    except TokenizerError as exc:
        raise ParamsError(f"[lveval -> tokenizer] {exc}") from None
