"""The ``publish`` settings."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import (
    Field,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

from benchsmith_scoring.tokens import Tokenizer, TokenizerSpec, load
from builders.releases import Release
from builders.settings import Strict
from pipelines.paths import ProjectPath
from pipelines.tokenizer_settings import TokenizerText

VERSION = re.compile(r"^\d+(\.\d+){1,3}([.-]?(a|b|rc|dev|pre)\.?\d*)?$")
"""Calendar or semantic versions with an optional pre-release: 2026.11.0, 2026.11.0rc1, 1.2.0."""
REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def _check_version(value: str) -> str:
    if not VERSION.match(value):
        raise ValueError(
            f"{value!r} is not a version such as 2026.11.0 or 2026.11.0rc1 (digits and dots, "
            "with an optional a/b/rc/dev suffix)"
        )
    return value


class EarlierRelease(Strict):
    """A release before the current one: its version and the last creation day it covered."""

    version: str = Field(description="The release's version (its Hub tag).")
    until: date = Field(description="Its window's last creation day (wiki.created_before then).")

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        return _check_version(value)

    def release(self) -> Release:
        """As a :class:`~builders.releases.Release`."""
        return Release(self.version, self.until)


class PublishSettings(Strict):
    """What to export under ``data/hub/<name>/``, and where and how to push it."""

    datasets: list[str] = Field(
        default_factory=lambda: ["wikigenbench", "summhay", "lveval"],
        description="Registered datasets to export (pipelines/publish/registry.py).",
    )
    version: str = Field(
        "2026.11.0",
        description="Written into the card; becomes the Hub tag (e.g. 2026.11.0, 2026.11.0rc1).",
    )
    history: list[EarlierRelease] = Field(
        default_factory=list,
        description=(
            "Earlier releases, oldest first (`benchsmith refresh` appends the current one): "
            "every item's first_release and LV-Eval's distractor pools follow from them."
        ),
    )
    items: Literal["all", "new"] = Field(
        "all",
        description=(
            "all: every item of the window, earlier ones with their first release; new: only "
            "the items this release adds."
        ),
    )
    namespace: str | None = Field(
        None, description="Hub user or organisation; repositories are <namespace>/<name>."
    )
    repos: dict[str, str] = Field(
        default_factory=dict, description="Repository id per dataset, overriding namespace/name."
    )
    revision: str = Field(
        "main",
        description="Branch to push to (created when missing); pre-releases can use another.",
    )
    private: bool = Field(False, description="Create missing repositories as private.")
    push: bool = Field(False, description="Push to the Hub (token from HF_TOKEN only).")
    documents: Literal["text", "urls"] = Field(
        "text",
        description=(
            "text: publish extracted web text; urls: URLs, content hashes and fetch times only "
            "(restore the text with `benchsmith rehydrate`)."
        ),
    )
    shard_mb: StrictInt = Field(
        500, gt=0, description="Parquet shard-size cap in MB of uncompressed Arrow data."
    )
    cards: ProjectPath = Field(Path("cards"), description="Folder of the card templates.")
    embeddings: bool = Field(True, description="Publish the embed stage's vectors when present.")
    tokenizers: list[TokenizerText] = Field(
        default_factory=lambda: ["cl100k_base", "o200k_base"],
        description=(
            "Tokenizers whose counts every long-context config publishes in its `tokens` column "
            "(one field per name, in this order): an OpenAI encoding (cl100k_base or "
            "o200k_base), a tokenizer.json path (relative to params.yaml; its chat "
            "template beside it frames the prompt; `benchsmith dag --write` lists it in dvc.yaml "
            "as a dependency of publish), or NAME=SPEC to choose the name."
        ),
    )
    retries: StrictInt = Field(5, ge=0, description="Retries of Hub calls answered 429 or 5xx.")
    backoff_s: float = Field(2.0, gt=0, description="First retry wait; doubles each time.")

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        return _check_version(value)

    @field_validator("tokenizers")
    @classmethod
    def _named_once(cls, value: list[str]) -> list[str]:
        names = [TokenizerSpec.parse(v).name for v in value]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(
                f"tokenizer name(s) {', '.join(repeated)} given twice; name them apart with "
                "NAME=SPEC (e.g. smollm2=path/to/tokenizer.json)"
            )
        return value

    @field_validator("datasets")
    @classmethod
    def _registered(cls, value: list[str]) -> list[str]:
        from pipelines.publish.registry import DATASETS

        unknown = [name for name in value if name not in DATASETS]
        if unknown:
            raise ValueError(
                f"unknown dataset(s) {', '.join(unknown)}; registered: {', '.join(DATASETS)}"
            )
        return value

    @field_validator("documents")
    @classmethod
    def _strippable(cls, value: str, info: ValidationInfo) -> str:
        from pipelines.publish.registry import DATASETS

        if value == "urls":
            for name in info.data.get("datasets", []):
                if reason := DATASETS[name].web_text_inside:
                    raise ValueError(
                        f"{name} cannot be published URL-only: {reason}; remove it from "
                        "publish.datasets or publish with documents: text"
                    )
        return value

    @model_validator(mode="after")
    def _repos_named(self) -> PublishSettings:
        if self.namespace is not None and not REPO_NAME.match(self.namespace):
            raise ValueError(f"namespace {self.namespace!r} is not a valid Hub user or org name")
        for name, repo in self.repos.items():
            owner, _, rest = repo.partition("/")
            if not (REPO_NAME.match(owner) and REPO_NAME.match(rest)):
                raise ValueError(f"repos.{name}: {repo!r} is not a repository id 'owner/name'")
        return self

    def loaded_tokenizers(self) -> list[Tokenizer]:
        """The tokenizers of ``tokenizers``, loaded (once per process)."""
        return [load(spec) for spec in self.tokenizers]

    @property
    def prerelease(self) -> bool:
        """Whether the version carries a pre-release suffix."""
        return bool(re.search(r"(a|b|rc|dev|pre)\.?\d*$", self.version))

    def repo_id(self, name: str) -> str | None:
        """The Hub repository of dataset ``name``, or None when none is configured."""
        if name in self.repos:
            return self.repos[name]
        return f"{self.namespace}/{name}" if self.namespace else None
