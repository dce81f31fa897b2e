"""What the generated lm-evaluation-harness tasks call: the data loader, prompts and scorers.

Every task YAML in an export's ``lm_eval/`` folder names these functions through the
``utils.py`` beside it, so a run needs neither benchsmith nor code of the user's own. Scores
are fractions (lm-eval averages them per task); the cards report the same means times 100.

The loader reads the export these files sit in when they sit in one (a local export, or a Hub
snapshot downloaded with its ``scoring/`` folder), and the Hub repository at the pinned
revision otherwise. Given a model's window and tokenizer (``--metadata '{"max_length": 4096,
"tokenizer": "cl100k_base"}'``) it applies the over-length policy of :mod:`.lengths`, and the
scores come per length bin as well, with their AUC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import prompts
from .lengths import LengthPolicy, Prompt, RowLength, measure, row_results
from .lengths import auc as auc  # lm-eval's aggregations of the per-bin metrics (utils.py)
from .lengths import total as total
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
    prompt: str | None = None,
    target: str | None = None,
    max_length: int | str | None = None,
    tokenizer: str | None = None,
    overlength: str | None = None,
    lengths_report: str | None = None,
    **_: Any,
) -> Any:
    """The ``DatasetDict`` of one config: from the export folder ``export`` (the one beside
    this file by default), else from ``repo`` at ``revision`` (the export's version tag); with
    ``cutoff`` (an ISO date, a model's knowledge cutoff), only rows whose event was created after
    it. lm-eval calls it as ``custom_dataset`` with the task's ``metadata`` (``--metadata
    '{"cutoff": "2026-06-30"}'``) and ``dataset_kwargs``, through the export's ``utils.py``,
    which names its own export: one process may run the tasks of several exports, and Python
    imports this package once, from the first.

    ``prompt`` (a hook's name) and ``target`` (the answer column), which the task YAML passes,
    describe the request; with them, ``max_length``, ``tokenizer`` and ``overlength`` (``skip``
    or ``truncate``) apply :mod:`.lengths`'s policy to the ``test`` split, which the tasks
    score; it logs what it skipped and appends it as a JSON line to the file
    ``lengths_report`` when given."""
    import datasets  # the harness has it

    policy = LengthPolicy.from_options(max_length, tokenizer, overlength)
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
    loaded = after_cutoff(loaded, cutoff) if cutoff else loaded
    if prompt is None or target is None:
        return loaded
    hook = PROMPTS[prompt]
    if "test" in loaded:  # the split the tasks score
        loaded["test"] = with_lengths(loaded["test"], policy, hook, target, config, lengths_report)
    return loaded


def with_lengths(
    rows: Any, policy: LengthPolicy, prompt: Prompt, target: str, config: str,
    report_file: str | None = None,
) -> Any:  # fmt: skip
    """A ``Dataset`` under ``policy``: the rows that fit (their contexts cut under
    ``truncate``), with ``length_tokens``, ``length_bin`` (the bin's upper edge) and
    ``length_skipped`` (the config's rows skipped) added; the rows as they are when no tokenizer
    decides (none chosen, none published).

    lm-eval cannot build a task without documents, so when no row fits, the first stands in
    with an empty context (``length_stand_in``): sent, a request of a few dozen tokens, but
    never scored (:func:`.lengths.row_results`)."""
    published = list(rows["tokens"]) if "tokens" in rows.column_names else [None] * len(rows)
    lengths, report = measure(published, rows.__getitem__, policy, prompt, target, config)
    if report.tokenizer is None:
        return rows
    report.log(report_file)
    kept = [length for length in lengths if length.fits]
    stand_in = not kept and bool(lengths)
    if stand_in:
        empty = "" if "context" in rows.column_names else None
        kept = [RowLength(0, lengths[0].tokens, lengths[0].upper, False, empty)]
    if len(kept) < len(lengths):
        rows = rows.select([length.index for length in kept], keep_in_memory=True)
    if any(length.context is not None for length in kept):
        contexts = [
            row if length.context is None else length.context
            for row, length in zip(rows["context"], kept, strict=True)
        ]
        rows = rows.remove_columns("context").add_column("context", contexts)
    rows = rows.add_column("length_tokens", [length.tokens for length in kept])
    rows = rows.add_column("length_bin", [length.upper for length in kept])
    rows = rows.add_column("length_skipped", [report.skipped] * len(kept))
    return rows.add_column("length_stand_in", [True]) if stand_in else rows


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


def lveval_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """lm-eval's ``process_results`` for an LV-Eval config, with the row's length bin
    (:func:`.lengths.row_results`)."""
    return row_results(doc, lambda: lveval_scores(doc, results[0] if results else ""))


def wikigen_prompt(doc: Mapping[str, Any]) -> str:
    """The closed-book article prompt: the event's title and its reference outline."""
    return prompts.text(
        "wikigen/article", {"title": doc["title"], "outline_text": doc["outline_text"]}
    )


def wikigen_rr_messages(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    """WikiGenBench's RR prompt over a row of ``rr_contexts``: the title and the documents the
    toolkit's RR baseline read, numbered as it numbered them."""
    documents = [{"n": d["n"], "text": d["text"]} for d in doc["documents"]]
    return prompts.messages("wikigen/rr", {"title": doc["title"], "documents": documents})


def summhay_messages(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    """SummHay's summarization messages over the whole haystack (the ``full`` setting), as the
    shipped Inspect task sends them: the subtopic's query and the haystack as one context."""
    variables = {"context": doc["context"], "query": doc["query"], "bullets": len(doc["insights"])}
    return prompts.messages("summhay/summarize", variables)


def wikigen_scores(doc: Mapping[str, Any], prediction: str) -> dict[str, float]:
    """ROUGE-L F-measure against the reference article, stemmed as WikiGenBench scores it."""
    return {"rouge_l": rouge(prediction, doc["article"], stem=True).rougeL}


def wikigen_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """lm-eval's ``process_results`` for the WikiGenBench entries config, with the row's length
    bin (:func:`.lengths.row_results`)."""
    return row_results(doc, lambda: wikigen_scores(doc, results[0] if results else ""))


PROMPTS: dict[str, Prompt] = {
    "lveval_prompt": lveval_prompt,
    "wikigen_prompt": wikigen_prompt,
    "wikigen_rr_messages": wikigen_rr_messages,
    "summhay_messages": summhay_messages,
}
"""The prompt hooks a task YAML names (``dataset_kwargs.prompt``), for the loader to count and
cut the requests they render."""
