"""Inspect AI tasks scored by the shipped scorers, as the cards score their baselines.

``eval.yaml`` can name only Inspect's built-in scorers, which approximate LV-Eval's AK gate and
WikiGenBench's ROUGE-L; the tasks built here use the benchmark's own. Each export's
``inspect/tasks.py`` (generated) declares one task per config with these builders::

    inspect eval <export>/inspect/tasks.py@<config> --model <provider>/<model>

This module needs ``inspect-ai`` (and ``datasets`` to load the data); the toolkit never
imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

from . import harness

_LVEVAL_FIELDS = ("answers", "answer_keywords", "language", "qa_id")


def _task(
    config: str,
    repo: str | None,
    revision: str | None,
    prompt: Callable[[Mapping[str, Any]], str],
    target: str,
    keep: tuple[str, ...],
    score: Scorer,
    max_tokens: int,
) -> Task:
    """A greedy task over one config's test split; ``keep`` are the columns the scorer reads."""
    rows = harness.load(config, revision=revision, repo=repo)["test"]
    samples = [
        Sample(
            id=f"{config}-{i}",
            input=prompt(row),
            target=str(row[target]),
            metadata={k: (list(row[k]) if k == "answers" else row[k]) for k in keep},
        )
        for i, row in enumerate(rows)
    ]
    return Task(
        dataset=MemoryDataset(samples, name=config),
        solver=generate(),
        scorer=score,
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        name=config,
    )


@scorer(metrics={"ak": [mean()], "ak_code": [mean()]})
def ak() -> Scorer:
    """LV-Eval's AK, as described (``ak``) and as its code computes it (``ak_code``)."""

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        return Score(value=harness.lveval_scores(state.metadata, completion), answer=completion)

    return score


@scorer(metrics=[mean()])
def rouge_l() -> Scorer:
    """WikiGenBench's ROUGE-L (stemmed) against the reference article."""

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        value = harness.wikigen_scores(state.metadata, completion)["rouge_l"]
        return Score(value=value, answer=completion)

    return score


def lveval_task(
    config: str, repo: str | None = None, revision: str | None = None, max_tokens: int = 64
) -> Task:
    """One LV-Eval config: the baseline's prompt, greedy, scored with AK."""
    prompt = harness.lveval_prompt
    return _task(config, repo, revision, prompt, "answer", _LVEVAL_FIELDS, ak(), max_tokens)


def wikigen_task(
    config: str, repo: str | None = None, revision: str | None = None, max_tokens: int = 1024
) -> Task:
    """WikiGenBench's entries, closed-book: the article from its title and outline."""
    keep = ("article", "event_id")
    prompt = harness.wikigen_prompt
    return _task(config, repo, revision, prompt, "article", keep, rouge_l(), max_tokens)
