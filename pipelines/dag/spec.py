"""The shape of one pipeline stage as the table declares it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.settings import Strict
from pipelines.failure_ledger import FAILURES

DATA = Path("data")
"""Every stage writes ``data/<stage>/``."""


@dataclass(frozen=True)
class Input:
    """A file or folder a stage reads from another stage's output folder.

    ``name`` is the run function's keyword and the CLI option (``--name``); an input with an
    empty name is only a dependency (the stage finds it itself, e.g. publish under ``data``).
    ``needed`` says, from the stage's settings, whether the file must exist (unset: always).
    """

    name: str
    stage: str
    path: str
    help: str = ""
    needed: Callable[[Any], bool] | None = None

    def under(self, data: Path = DATA) -> Path:
        """Where the producing stage writes it, in the data folder ``data``."""
        return data / self.stage / self.path

    def is_needed(self, settings: Any) -> bool:
        return self.needed is None or bool(self.needed(settings))


@dataclass(frozen=True)
class Plot:
    """A CSV the stage writes for ``dvc plots``: one x column against y columns."""

    path: str
    title: str
    x: str
    y: tuple[str, ...]


@dataclass(frozen=True)
class Shared:
    """Something a run function takes besides its own settings and inputs: a shared section of
    ``params.yaml`` (``llm``) or a place (``root``); ``params`` are the keys its value depends
    on, added to the stage's DVC params."""

    value: Callable[[Any, Any], Any]
    params: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stage:
    """One stage: one word for the DVC stage, the CLI command, ``data/<name>/`` and the
    ``params.yaml`` key of its ``settings`` model."""

    name: str
    help: str
    settings: type[Strict]
    run: str
    """``module:function``; the module also defines ``summary(stats, out) -> str``, a line made
    from the returned stats alone (counts, and figures the run put in ``stats.headline``)."""
    inputs: tuple[Input, ...] = ()
    outs: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ("stats.json",)
    plots: tuple[Plot, ...] = ()
    prompts: tuple[str, ...] = ()
    """Prompt files or folders under ``pipelines/prompts/`` that the stage renders."""
    uses: tuple[str, ...] = ()
    """Names in the table's ``SHARED``, passed to the run function as keywords."""
    params: tuple[str, ...] = ()
    """More ``params.yaml`` keys its outputs depend on (its own key always counts)."""
    files: tuple[str, ...] = ()
    """Input files named by settings, as dotted keys (``wiki.dump.path``); DVC interpolates them."""
    tokenizers: tuple[str, ...] = ()
    """Tokenizer settings, as dotted keys (``lveval.tokenizer``): the tokenizer.json a key names
    in ``params.yaml`` (and the chat template files beside it) is a dependency, an OpenAI
    encoding none; read when ``dvc.yaml`` is written (``benchsmith dag --write`` after changing
    one)."""
    data_deps: tuple[str, ...] = ()
    """Other project folders it reads (card templates)."""

    @property
    def out(self) -> Path:
        return DATA / self.name

    @property
    def module(self) -> str:
        return self.run.split(":", 1)[0]

    def function(self) -> Callable[..., Any]:
        """The run function (importing the stage module only now)."""
        module, name = self.run.split(":", 1)
        return getattr(importlib.import_module(module), name)

    def summary(self) -> Callable[..., str]:
        """The one-line summary the CLI prints after a run."""
        return importlib.import_module(self.module).summary

    @property
    def asks_models(self) -> bool:
        """Whether it asks models (it uses the ``llm`` section)."""
        return "llm" in self.uses

    @property
    def data_outs(self) -> tuple[str, ...]:
        """Its outputs DVC caches: ``outs``, and the failure ledger of a stage that asks models
        (``llm_failures.parquet``)."""
        return (*self.outs, *([FAILURES] if self.asks_models else []))

    def writes(self) -> list[str]:
        """Every path it writes, relative to ``data/<name>/``."""
        return [*self.data_outs, *self.metrics, *(p.path for p in self.plots)]
