"""What the generated lm-evaluation-harness tasks call: the data loader, prompts and scorers.

Every task YAML in an export's ``lm_eval/`` folder names these functions through the
``utils.py`` beside it, so a run needs neither benchsmith nor code of the user's own. Scores
are fractions (lm-eval averages them per task); the cards report the same means times 100.

The loader reads the export these files sit in when they sit in one (a local export, or a Hub
snapshot downloaded with its ``scoring/`` folder), and the Hub repository at the pinned
revision otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import prompts
from .leval.metrics import rouge
from .lveval import ak_score

EXPORT = Path(__file__).resolve().parents[2]
"""The export folder when this file is ``<export>/scoring/benchsmith_scoring/harness.py``."""


def local_export(config: str, root: Path = EXPORT) -> Path | None:
    """``root`` when it is an export holding ``config``'s data (a card and its folder)."""
    return root if (root / "README.md").is_file() and (root / config).is_dir() else None


def load(
    config: str,
    revision: str | None = None,
    repo: str | None = None,
    cutoff: str | None = None,
    export: str | Path | None = None,
    **_: Any,
) -> Any:
    """The ``DatasetDict`` of one config: from the export folder ``export`` (the one beside
    this file by default), else from ``repo`` at ``revision`` (the export's version tag); with
    ``cutoff`` (an ISO date, a model's knowledge cutoff), only rows whose event was created after
    it. lm-eval calls it as ``custom_dataset`` with the task's ``metadata`` (``--metadata
    '{"cutoff": "2026-06-30"}'``) and ``dataset_kwargs``, through the export's ``utils.py``,
    which names its own export: one process may run the tasks of several exports, and Python
    imports this package once, from the first."""
    import datasets  # the harness has it

    root = Path(export) if export is not None else EXPORT
    found = local_export(config, root)
    if found is not None:
        loaded = datasets.load_dataset(str(found), config)
    elif repo:
        loaded = datasets.load_dataset(repo, config, revision=revision)
    else:
        raise FileNotFoundError(
            f"config {config!r}: no export folder at {root} holds it and the task names no "
            "Hub repository; run the task from the export's own lm_eval/ folder"
        )
    return after_cutoff(loaded, cutoff) if cutoff else loaded


def after_cutoff(dataset: Any, cutoff: str) -> Any:
    """Rows of a ``Dataset`` or ``DatasetDict`` whose event was created after ``cutoff`` (an ISO
    date or time, UTC): the items a model with that knowledge cutoff cannot have seen. Rows
    without an event date are left out."""
    from datetime import UTC, datetime

    when = datetime.fromisoformat(cutoff)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if len(cutoff) <= 10:  # a day: everything created on it is on or before the cutoff
        when = when.replace(hour=23, minute=59, second=59, microsecond=999999)

    def fresh(row: Mapping[str, Any]) -> bool:
        created = row.get("event_created_at")
        if created is None:
            return False
        if created.tzinfo is None:
            created = created.replace(tzinfo=UTC)
        return bool(created > when)

    return dataset.filter(fresh)


def answers_of(doc: Mapping[str, Any]) -> list[str]:
    """A record's reference answers as a list (a single string is one answer)."""
    value = doc["answers"]
    return [value] if isinstance(value, str) else [str(a) for a in value]


def lveval_prompt(doc: Mapping[str, Any]) -> str:
    """LV-Eval's question prompt over the whole context, as the card's baseline asked it (the
    baseline cut the context's middle to its token budget; a harness truncates by itself)."""
    variables = {"context": doc["context"], "question": doc["question"], "length_instruction": ""}
    return prompts.text("lveval/answer", variables)


def lveval_scores(doc: Mapping[str, Any], prediction: str) -> dict[str, float]:
    """AK as LV-Eval describes it (``ak``) and as its public code computes it (``ak_code``)."""
    answers, keywords = answers_of(doc), doc.get("answer_keywords") or None
    language = doc.get("language") or "en"
    return {
        metric: ak_score(prediction, answers, keywords, language=language, mode=mode).score
        for metric, mode in (("ak", "readme"), ("ak_code", "reference_code"))
    }


def lveval_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, float]:
    """lm-eval's ``process_results`` for an LV-Eval config."""
    return lveval_scores(doc, results[0] if results else "")


def wikigen_prompt(doc: Mapping[str, Any]) -> str:
    """The closed-book article prompt: the event's title and its reference outline."""
    return prompts.text(
        "wikigen/article", {"title": doc["title"], "outline_text": doc["outline_text"]}
    )


def summhay_messages(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    """SummHay's summarization messages over the whole haystack (the ``full`` setting), as the
    shipped Inspect task sends them: the subtopic's query and the haystack as one context."""
    variables = {"context": doc["context"], "query": doc["query"], "bullets": len(doc["insights"])}
    return prompts.messages("summhay/summarize", variables)


def wikigen_scores(doc: Mapping[str, Any], prediction: str) -> dict[str, float]:
    """ROUGE-L F-measure against the reference article, stemmed as WikiGenBench scores it."""
    return {"rouge_l": rouge(prediction, doc["article"], stem=True).rougeL}


def wikigen_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, float]:
    """lm-eval's ``process_results`` for the WikiGenBench entries config."""
    return wikigen_scores(doc, results[0] if results else "")
