"""The ``lveval`` settings: sources of QA items, length levels, CFI and KPR (pure; the stage's
model in :mod:`pipelines.synthesis.lveval_settings` adds the file checks)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, StrictInt, field_validator

from builders.lveval.contexts import level_words
from builders.lveval.official import AK_NAMES
from builders.settings import Strict

DEFAULT_LEVELS = ["16k", "32k", "64k", "128k", "256k"]


class EventQuestions(Strict):
    """Questions about the selected Wikipedia events (the wikigen entries)."""

    enabled: bool = Field(True, description="Build QA items from the selected events.")
    dataset: str = Field(
        "events_mixup", pattern=r"^[A-Za-z0-9_]+$", description="Name of the built subset."
    )
    questions_per_event: StrictInt = Field(4, ge=0, description="Single-hop questions per event.")
    multi_hop_per_event: StrictInt = Field(2, ge=0, description="Multi-hop questions per event.")
    max_prompt_words: StrictInt = Field(
        3000, ge=100, description="Passages shown to the question writer, article first."
    )


class HubSource(Strict):
    """A Hugging Face dataset (hub id or local folder) with question, answers and context."""

    path: str = Field(description="Hub id or local folder.")
    name: str | None = Field(None, description="Dataset configuration, if any.")
    revision: str | None = Field(
        None,
        min_length=1,
        description=(
            "Hub revision (commit sha, tag or branch) to load, so the same inputs give the same "
            "records; pin a commit sha for hub ids. Unset: the latest (local folders need none)."
        ),
    )
    split: str = Field("test", description="Split to read.")
    dataset: str = Field(pattern=r"^[A-Za-z0-9_]+$", description="Name of the built subset.")
    language: Literal["en", "zh"] = Field("en", description="Language of the records (AK).")
    question: str = Field("question", description="Question column.")
    answers: str = Field("answers", description="A string or list of strings column.")
    context: str = Field("context", description="A string or list of strings column.")
    keywords: str | None = Field(None, description="Answer keywords column, if any.")
    limit: StrictInt | None = Field(None, ge=1, description="Rows read at most; unset: all.")


class CFISettings(Strict):
    """Confusing facts: one per item, checked, inserted at seeded positions."""

    copies: StrictInt = Field(1, ge=1, description="Insertions of each fact per context.")


class KPRSettings(Strict):
    """Keyword and phrase replacement."""

    max_rules: StrictInt = Field(4, ge=1, description="Proposed rules per item.")
    rules_file: Path | None = Field(
        None,
        description=(
            "Reviewed rules (JSONL of orig, repl, scope) overriding proposals; must exist, "
            "relative to params.yaml. Unset: no reviewed rules."
        ),
    )


class LVEvalSettings(Strict):
    """LV-Eval-style sets. Defaults follow LV-Eval: five levels from 16k to 256k words."""

    seed: StrictInt = Field(2026, description="Seed of depths, distractors, facts and names.")
    levels: list[str] = Field(
        default_factory=lambda: list(DEFAULT_LEVELS),
        description=(
            "Length levels (LV-Eval: 16k, 32k, 64k, 128k, 256k words; characters for Chinese); "
            "a record's length lands in [level x (1 - tolerance), level]."
        ),
    )
    tolerance: float = Field(
        0.05, gt=0, lt=1, description="A record's length lands in [level x (1 - tolerance), level]."
    )
    length_unit: Literal["words", "tokens"] = Field(
        "words",
        description=(
            "What a level counts. words: LV-Eval's own (16k = 16,000 words, characters for "
            "Chinese, of the question, context and answers). tokens: 16k = 16,384 tokens of "
            "lveval.tokenizer in the harness request (the shipped lveval/answer prompt with the "
            "context and question, framed as the tokenizer's chat, plus the first answer); the "
            "same items, passages, facts and rules, only the context is cut elsewhere. Records "
            "then add level_tokens, tokenizer and request_tokens; level_words keeps the label "
            "read in words (128k: 128,000), so levels sort and plot as in word mode."
        ),
    )
    tokenizer: str = Field(
        "cl100k_base",
        description=(
            "The tokenizer of length_unit: tokens: an OpenAI encoding (cl100k_base, o200k_base), "
            "a tokenizer.json path (relative to params.yaml; its chat template beside it frames "
            "the prompt; a DVC dependency of the stage), or NAME=SPEC. Checked whatever the "
            "unit: an unknown name or an unreadable file fails at benchsmith check."
        ),
    )
    passage_words: StrictInt = Field(
        800, ge=50, description="Longer documents are split into passages of about this size."
    )
    events: EventQuestions = Field(default_factory=EventQuestions)
    hub_sources: list[HubSource] = Field(default_factory=list)
    cfi: CFISettings = Field(default_factory=CFISettings)
    kpr: KPRSettings = Field(default_factory=KPRSettings)
    write_buffer_mb: StrictInt = Field(
        32, ge=1, description="Context text buffered before a write; bounds memory at long levels."
    )

    official_layout: bool = Field(
        False,
        description=(
            "Also write official/<variant>/<name>_<level>.jsonl, the layout LV-Eval's own "
            "prediction.py and evaluation.py read (not a DVC output)."
        ),
    )
    official_name: str | None = Field(
        None,
        description=(
            "LV-Eval set name of the official layout (selects only their prompt and metric); "
            "one of their AK-scored sets of the records' language. Unset: multifieldqa_en_mixup "
            "or multifieldqa_zh_mixup."
        ),
    )

    def rows_per_write(self, words: int) -> int:
        """Records per buffered write at a level of ``words`` (about 6 bytes per word)."""
        return max(1, min(256, self.write_buffer_mb * 2**20 // (6 * words)))

    @field_validator("levels")
    @classmethod
    def _levels(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one length level is needed")
        sizes = [level_words(v) for v in value]
        if sizes != sorted(set(sizes)):
            raise ValueError("levels must be distinct and increasing")
        return value

    @field_validator("official_name")
    @classmethod
    def _official_name(cls, value: str | None) -> str | None:
        if value is not None and value not in AK_NAMES:
            raise ValueError(f"not an AK-scored set of LV-Eval's config.py: {list(AK_NAMES)}")
        return value
