"""Settings of the ``validate`` stage: the reference panel (models, each an ``llm`` block with a
name and a tier), what counts as answered correctly, how difficulty is labelled, and which
items are dropped."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from builders.settings import Strict
from builders.validation import Tier
from pipelines.llm.settings import LLMSettings

ValidatedDataset = Literal["lveval", "wikigenbench", "summhay"]


class PanelModel(Strict):
    """One reference model: the keys of the ``llm`` section it changes, a name and a tier."""

    name: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$",
        description="How labels, answers and the card name the model (letters, digits, _.:-).",
    )
    tier: Tier = Field(
        description=(
            "high, mid or low: LongBench Pro ranks its reference models by overall score and "
            "splits them into these three tiers."
        )
    )
    llm: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "Keys of the llm section that differ for this model (backend, model, base_url, "
            "api_key_env, prices, mode: batch, ...); the rest is the llm section's. Empty: the "
            "configured model itself."
        ),
    )

    @field_validator("llm")
    @classmethod
    def _known_llm_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Each key is an ``llm`` setting of the right type (checked on the defaults)."""
        LLMSettings.model_validate(value)
        return value

    def settings(self, base: LLMSettings) -> LLMSettings:
        """This model's LLM settings: ``base`` with its keys changed."""
        return LLMSettings.model_validate({**base.model_dump(), **self.llm})


class Difficulty(Strict):
    """LongBench Pro's cascade (Section 3.5), with its "at most one of five models" as a
    share, so that a panel of any size can use it."""

    fail_share: float = Field(
        0.2,
        ge=0,
        lt=1,
        description=(
            "A tier fails an item when at most this share of its models answer it correctly "
            "with the evidence: extreme when the high tier fails, else hard when the mid tier "
            "fails, else moderate when the low tier fails, else easy (a tier without models is "
            "skipped). LongBench Pro: at most 1 of 5, 0.2."
        ),
    )


class ValidateSettings(Strict):
    """A reference panel answers every item with its evidence and without it."""

    models: list[PanelModel] = Field(
        default_factory=lambda: [PanelModel(name="configured", tier="high")],
        min_length=1,
        description=(
            "The reference models. Each answers every LV-Eval QA item closed-book and with "
            "its gold evidence only, judges whether each WikiGenBench entry's documents "
            "support its lead, and looks for each SummHay insight in its documents."
        ),
    )
    datasets: list[ValidatedDataset] = Field(
        default_factory=lambda: ["lveval", "wikigenbench", "summhay"],
        description="The datasets whose items the panel validates.",
    )
    correct_at: float = Field(
        0.65,
        ge=0,
        le=1,
        description=(
            "The score from which a model's answer counts as correct (AK for LV-Eval, the share "
            "of lead sentences supported for WikiGenBench, of gold documents the insight is "
            "found in for SummHay). LongBench Pro's threshold for its graded scores."
        ),
    )
    min_solvable: float = Field(
        0.0,
        ge=0,
        le=1,
        description=(
            "Items that a smaller share of the panel answers correctly with the evidence are "
            "dropped from the release, with that reason (0: none is)."
        ),
    )
    difficulty: Difficulty = Field(default_factory=Difficulty)
    full_context: bool = Field(
        True,
        description=(
            "Also ask every LV-Eval item with its record's whole context (the shortest level, "
            "clean variant); difficulty is labelled from these answers, as LongBench Pro "
            "labels from full-context scores (the evidence answers where an item has no record)."
        ),
    )
    noise_floor: bool = Field(
        True,
        description=(
            "Also ask every LV-Eval item and WikiGenBench lead sentence with another item's "
            "evidence (a seeded derangement): the panel's score there is the noise floor. "
            "SummHay's comes free: insights found in documents that do not carry them."
        ),
    )
    premise_chunks: int = Field(
        3,
        gt=0,
        description=(
            "WikiGenBench: the entry's chunks (BM25 against the lead sentence) the entailment "
            "judge reads for each sentence of the lead."
        ),
    )
    seed: int = Field(0, description="Seeds the noise floor's derangement.")

    def model_settings(self, base: LLMSettings) -> dict[str, LLMSettings]:
        """Each panel model's LLM settings, by name."""
        return {m.name: m.settings(base) for m in self.models}

    @field_validator("models")
    @classmethod
    def _distinct_names(cls, value: list[PanelModel]) -> list[PanelModel]:
        names = [m.name for m in value]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"model names must differ; used twice: {', '.join(twice)}")
        return value
