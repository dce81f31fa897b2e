"""QA items from a Hugging Face dataset (hub id or local folder) with question, answers and
supporting context; the column names are settings. The evidence of an item is the first
context sentence that states its first answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from builders.drops import Drop
from builders.lveval.answers import QuestionDraft, Quote
from builders.lveval.qa import to_item
from builders.lveval.records import Passage, QAItem, drop
from builders.lveval.settings import HubSource
from builders.lveval.text import mentions
from builders.text import sentences
from pipelines.errors import ParamsError
from pipelines.hub_downloads import hint, local_only


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict) and "text" in value:  # SQuAD-style {"text": [...]}
        return _strings(value["text"])
    return [str(v) for v in value if v is not None]


def _evidence(passages: Sequence[Passage], answer: str, language: str) -> Quote | None:
    for passage in passages:
        for start, end in sentences(passage.text) or [(0, len(passage.text))]:
            if mentions(passage.text[start:end], answer, language):
                return Quote(passage_id=passage.passage_id, quote=passage.text[start:end])
    return None


def hub_items(source: HubSource, where: str) -> tuple[list[QAItem], list[Passage], list[Drop]]:
    """Items, their context passages (also distractors for every item) and drops."""
    import datasets

    if local_only(source.path):
        raise ParamsError(f"{where}.path: no such folder{hint(source.path)}")
    try:
        rows = datasets.load_dataset(
            source.path, source.name, split=source.split, revision=source.revision
        )
    except Exception as exc:  # the library raises many kinds; name the setting either way
        raise ParamsError(f"{where}: cannot load {source.path!r} ({exc})") from exc
    columns = [source.question, source.answers, source.context]
    columns += [source.keywords] if source.keywords else []
    for key, column in zip(("question", "answers", "context", "keywords"), columns, strict=False):
        if column not in rows.column_names:
            raise ParamsError(
                f"{where}.{key}: no column {column!r} in {source.path} "
                f"(columns: {', '.join(rows.column_names)})"
            )
    if source.limit:
        rows = rows.select(range(min(source.limit, len(rows))))
    items: list[QAItem] = []
    passages: list[Passage] = []
    drops: list[Drop] = []
    for n, row in enumerate(rows):
        texts = [t for t in _strings(row[source.context]) if t.strip()]
        own = [
            Passage(f"{source.dataset}:{n}:{k}", source.dataset, "", t.strip(), source.language)
            for k, t in enumerate(texts)
        ]
        passages += own
        answers = [a for a in _strings(row[source.answers]) if a.strip()]
        question = str(row[source.question] or "").strip()
        row_id = f"{source.dataset}:{n}"
        if not answers or not question:
            drops.append(
                drop(source.dataset, row_id, "import", "no_question_or_answer", kind="row")
            )
            continue
        quote = _evidence(own, answers[0], source.language)
        if quote is None:
            drops.append(
                drop(source.dataset, row_id, "qa_check", "answer_not_in_evidence", kind="row")
            )
            continue
        keywords = " ".join(_strings(row[source.keywords])) if source.keywords else ""
        # alternative answers are kept when the same evidence states them too
        stated = [a for a in answers if mentions(quote.quote, a, source.language)]
        draft = QuestionDraft(
            question=question, answers=stated, answer_keywords=keywords, evidence=[quote]
        )
        result = to_item(
            draft,
            {p.passage_id: p for p in own},
            dataset=source.dataset,
            source=source.path,
            language=source.language,
        )
        if isinstance(result, QAItem):
            items.append(result)
        else:
            drops.append(drop(source.dataset, row_id, "qa_check", *result, kind="row"))
    return items, passages, drops
