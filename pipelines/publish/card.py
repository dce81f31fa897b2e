"""The dataset card (README.md with Hub YAML metadata) and eval.yaml of one export."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from datasets import DatasetInfo, Features, LargeList, List, Value
from datasets.info import DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from huggingface_hub import DatasetCard, DatasetCardData
from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateError

from benchsmith_scoring.tokens import Tokenizer
from pipelines.errors import PublishError
from pipelines.publish import token_counts
from pipelines.publish.export import ExportedConfig
from pipelines.publish.harness import harness_configs
from pipelines.publish.provenance import Provenance
from pipelines.publish.registry import LICENSE_FILE, ConfigSpec, DatasetSpec
from pipelines.publish.statistics import StatTable
from pipelines.publish.token_counts import COLUMN, FRAMINGS

FIELD_DOCS = {
    "event_id": "Stable id of the event (Wikipedia page id based); the key shared by every config.",
    "entry_id": "The event this row belongs to (event_id of the entries config).",
    "split": "train or test; assigned by a seeded hash of the id, so an event keeps its split.",
    "doc_id": "Stable id of a related document (event and canonical URL).",
    "origin": "human: cited by the article's editors; search: found by the search engine.",
    "status": "How fetching or extraction ended (ok, dead, robots, timeout, ...).",
    "reason": "Why an item is not ok, in words.",
    "content_hash": "sha1 of the extracted text with whitespace and case folded.",
    "fetched_at": "When the document was fetched (UTC).",
    "chunk_id": "Stable id of the chunk (document, ordinal and text).",
    "vector": "The chunk's embedding (fixed length).",
    "qa_id": "Stable id of the QA item; the same at every level and variant.",
    "variant": "clean, cfi (confusing facts inserted), kpr (keywords replaced) or cfi_kpr.",
    "level": "The row's length level, e.g. `16k`: thousands of words, as LV-Eval names them.",
    "context": "The long context: passages separated by '### Passage N'.",
    "input": "The question.",
    "question": "The question (LV-Eval calls it `input`).",
    "answers": "Reference answers.",
    "reference": "The reference insights as a bullet list (the target in `eval.yaml`).",
    "outline_text": "The section headings in Markdown, one a line (for prompting).",
    "article": "The reference article in Markdown: lead, then headings and text.",
    "answer": "The first of `answers` (empty when there is none), for scorers taking one answer.",
    "answer_keywords": "Words an answer must contain for the AK metric's recall gate.",
    "length": (
        "LV-Eval's `length`: whitespace-separated words of the question, the context and every "
        "reference answer together (characters, whitespace not counted, for Chinese), as LV-Eval "
        "counts it; not the context alone. `tokens` counts tokens."
    ),
    "evidence_positions": "Character spans of the supporting evidence in the context.",
    "confusing_fact_positions": "Character spans of the inserted confusing facts.",
    "replacement_rules": "KPR rules applied to context, question and answers.",
    "title": "Title of the article or document.",
    "url": "Where the article or document was read.",
    "canonical_url": "The URL with tracking parameters and fragments removed.",
    "final_url": "The URL after redirects.",
    "http_status": "HTTP status of the last answer (empty when none came).",
    "created_at": "When the Wikipedia article was created (UTC).",
    "summary": "The article's lead section.",
    "outline": "Section titles in order (the outline to generate).",
    "sections": "Sections with level, title and text (the reference article).",
    "infobox": "Infobox fields as key/value pairs.",
    "infobox_type": "The infobox template, e.g. flood or election.",
    "references": (
        "The article's citations: name, citation text, URL, and the citation's archive-url, "
        "archive-date and access-date as written."
    ),
    "word_count": (
        "Length of `text` in the unit `length_unit` names: whitespace-separated words, or "
        "characters (whitespace not counted) for Chinese and Japanese pages."
    ),
    "length_unit": "What `word_count` counts: words, or characters for Chinese and Japanese.",
    "documents": (
        "Related documents of the entry (usable ones, with text); each one's `word_count` is its "
        "text's length in whitespace-separated words (characters for Chinese and Japanese pages)."
    ),
    "document_counts": (
        "Related documents by origin and crawl status, usable or not (`count`: documents)."
    ),
    "document_id": "The chunked document (doc_id of the documents config).",
    "ordinal": "Position of the chunk in its document.",
    "char_start": "First character of the chunk in the document's text.",
    "char_end": "End (exclusive) of the chunk in the document's text.",
    "word_start": "First word of the chunk: its index among the text's whitespace-separated words.",
    "word_end": "End (exclusive) of the chunk among the text's whitespace-separated words.",
    "words": "Whitespace-separated words in the chunk (`word_end - word_start`).",
    "text": "Extracted text (absent when documents are published as URLs only).",
    "model": "The encoder that made the vector.",
    "date": "Publication date found in the page, if any.",
    "language": "Language found in the page, if any.",
    "cite_text": "How the article's editors cited the document.",
    "query": "The search query that found the document.",
    "rank": "Rank of the document in the search results.",
    "snippet": "The search engine's snippet.",
    "archived": "Whether the text comes from an archived copy of a lost human-editor link.",
    "archive": "Where the archived copy came from: citation (its archive-url) or wayback.",
    "memento_at": "When the archived copy was made (UTC), if the archive says.",
    "dataset": "LV-Eval subset name.",
    "hops": "1 for single-hop questions, 2 or more for multi-hop.",
    "passage_ids": "The supporting passages of the question.",
    "confusing_facts": "Inserted confusing facts (empty in the clean and kpr variants).",
    "level_words": (
        "The length level in words (`level` read as thousands: 16k -> 16,000); each row's "
        "`length` lands at most this, and at least (1 - lveval.tolerance) times it."
    ),
    "topic_id": "Stable id of the SummHay topic (one haystack per topic).",
    "domain": "SummHay domain: news or conversation.",
    "topic": "The topic of the haystack.",
    "subtopic_id": "Stable id of the subtopic within its topic.",
    "subtopic": "The subtopic's name.",
    "description": "What the subtopic covers.",
    "insights": "Reference insights, with their gold documents by id and by citation number.",
    "document_ids": "The haystack's documents in haystack order (Document N is the N-th).",
    "subtopics": "Subtopics with their query and reference insights.",
    "participants": "Speakers of a conversation topic (empty for news).",
    "provenance": "How the haystack was generated, as key/value pairs.",
    "source": "Where the item came from.",
    "evidence": "Supporting passages of the answer, with character spans.",
    "supporting_ids": "Ids of the supporting passages.",
}

SIZE_CATEGORIES = [
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
]


@dataclass(frozen=True)
class CardInputs:
    """Everything a card is rendered from."""

    spec: DatasetSpec
    configs: list[ExportedConfig]
    version: str
    repo_id: str | None
    documents: str
    statistics: list[StatTable]
    baselines: list[StatTable]
    charts: list[tuple[str, str]]
    provenance: Provenance
    lm_eval_groups: list[str] = field(default_factory=list)
    """The lm-evaluation-harness groups written to ``lm_eval/`` (the dataset's own first)."""
    inspect_tasks: bool = False
    """Whether ``inspect/tasks.py`` was written."""
    changes: str = ""
    """This release's changelog section (Markdown, ``##`` headings), '' when none."""
    contamination: str = ""
    """The contamination probe's section (Markdown), '' when the dataset is not probed."""
    tokenizers: Sequence[Tokenizer] = ()
    """The tokenizers its ``tokens`` columns count in (none when no config has the column)."""
    token_table: StatTable | None = None
    """Tokens per row of each config, in each tokenizer."""
    validation: str = ""
    """The reference panel's section (Markdown), '' when the dataset's items are not labelled."""
    audit: str = ""
    """The Audit section of the release's reviews (Markdown), '' when nobody reviewed it."""


def size_category(rows: int) -> str:
    """The Hub's size category of a dataset with ``rows`` rows."""
    return next((label for limit, label in SIZE_CATEGORIES if rows < limit), "n>100M")


def type_name(feature: Any) -> str:
    """A short type for the fields table: ``string``, ``list<string>``, ``float16[384]``."""
    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, List | LargeList):
        inner = type_name(feature.feature)
        length = getattr(feature, "length", -1)
        return f"{inner}[{length}]" if length and length > 0 else f"list<{inner}>"
    if isinstance(feature, dict):
        return "struct{" + ", ".join(f"{k}: {type_name(v)}" for k, v in feature.items()) + "}"
    return type(feature).__name__


def field_docs(spec: ConfigSpec) -> dict[str, str]:
    """The descriptions of a config's fields: the shared ones, then its own, then what its
    ``tokens`` column counts."""
    docs = FIELD_DOCS | dict(spec.fields)
    return docs | ({COLUMN: token_counts.description(spec)} if spec.tokens else {})


def fields_table(
    features: Features, docs: dict[str, str] = FIELD_DOCS
) -> list[tuple[str, str, str]]:
    """``(field, type, description)`` for every top-level field."""
    return [(name, type_name(f), docs.get(name, "")) for name, f in features.items()]


def token_coverage(configs: list[ExportedConfig]) -> list[tuple[str, str]]:
    """``(configs, what their tokens column counts)``, one line per kind of config (LV-Eval's
    level configs share one)."""
    names: dict[str, list[str]] = {}
    for c in configs:
        if COLUMN in c.features:
            names.setdefault(c.spec.name, []).append(c.name)
    by_spec = {c.spec.name: c.spec for c in configs}
    return [(_named(found), token_counts.covers(by_spec[spec])) for spec, found in names.items()]


def _named(configs: list[str]) -> str:
    """Config names for a sentence: all of up to three, else the first and last and how many."""
    if len(configs) <= 3:
        return ", ".join(f"`{n}`" for n in configs)
    return f"`{configs[0]}` to `{configs[-1]}` ({len(configs)} configs)"


def card_data(inputs: CardInputs) -> DatasetCardData:
    """The card's YAML metadata: license, sizes, tags, configs and the declared features."""
    spec, configs = inputs.spec, inputs.configs
    default = next((c.name for c in configs if c.spec.task), configs[0].name)
    rows = next((c.rows for c in configs if c.name == spec.size_from), configs[0].rows)
    data = DatasetCardData(
        license=spec.license,
        **license_fields(spec),
        pretty_name=spec.pretty_name,
        language=list(spec.language),
        task_categories=list(spec.task_categories),
        size_categories=[size_category(rows)],
        tags=[*spec.tags, f"version-{inputs.version}"],
        source_datasets=list(spec.source_datasets),
        configs=[
            {
                "config_name": c.name,
                "data_files": [
                    {"split": split, "path": f"{c.name}/{split}-*"} for split in c.splits
                ],
                **({"default": True} if c.name == default else {}),
            }
            for c in configs
        ],
    )
    DatasetInfosDict({c.name: dataset_info(c) for c in configs}).to_dataset_card_data(data)
    return data


def dataset_info(config: ExportedConfig) -> DatasetInfo:
    """A config's ``dataset_info`` in the ``datasets`` library's terms: per split the rows and the
    Arrow size (``num_bytes``); ``download_size`` the shards' size on disk and ``dataset_size``
    the sum of the splits' Arrow sizes."""
    splits = SplitDict()
    for split, files in config.splits.items():
        splits.add(SplitInfo(name=split, num_examples=files.rows, num_bytes=files.num_bytes))
    return DatasetInfo(
        features=config.features,
        splits=splits,
        config_name=config.name,
        download_size=sum(f.bytes for f in config.splits.values()),
        dataset_size=sum(f.num_bytes for f in config.splits.values()),
    )


def license_fields(spec: DatasetSpec) -> dict[str, str]:
    """``license_name`` and ``license_link`` (LICENSE.md) of a dataset with ``license: other``."""
    if spec.license != "other":
        return {}
    if not spec.license_name or not spec.license_terms:
        raise PublishError(f"{spec.name}: license 'other' needs a license_name and license_terms")
    return {"license_name": spec.license_name, "license_link": LICENSE_FILE}


def license_text(spec: DatasetSpec, version: str) -> str:
    """LICENSE.md: the terms of every source of text in the dataset."""
    rows = "\n".join(f"| {what} | {terms} |" for what, terms in spec.license_terms)
    return (
        f"# Licence of {spec.pretty_name}, version {version}\n\n"
        "The dataset mixes text from several sources; each keeps its own terms.\n\n"
        f"| text | terms |\n|---|---|\n{rows}\n"
    )


def render_card(inputs: CardInputs, templates: Path) -> DatasetCard:
    """Render README.md: the YAML metadata plus the body from ``templates/<spec.template>``."""
    if not (templates / inputs.spec.template).is_file():
        raise PublishError(
            f"{templates / inputs.spec.template}: card template of {inputs.spec.name} not found"
        )
    env = Environment(
        loader=FileSystemLoader(templates),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    citations = []
    for key in inputs.spec.citations:
        path = templates / "citations" / f"{key}.bib"
        if not path.is_file():
            raise PublishError(f"{path}: citation {key!r} of {inputs.spec.name} not found")
        citations.append(path.read_text("utf-8").strip())
    repo = inputs.repo_id or f"<namespace>/{inputs.spec.name}"
    harnessed = harness_configs(inputs.configs)
    harnesses = [c.spec.harness for c in harnessed if c.spec.harness]
    try:
        body = env.get_template(inputs.spec.template).render(
            spec=inputs.spec,
            configs=inputs.configs,
            fields={c.name: fields_table(c.features, field_docs(c.spec)) for c in inputs.configs},
            version=inputs.version,
            repo=repo,
            documents=inputs.documents,
            statistics=inputs.statistics,
            baselines=inputs.baselines,
            charts=inputs.charts,
            provenance=inputs.provenance,
            params_yaml=yaml.safe_dump(inputs.provenance.params, sort_keys=False).strip(),
            citations=citations,
            eval_tasks=evaluated_configs(inputs.configs),
            lm_eval_groups=inputs.lm_eval_groups,
            inspect_tasks=inputs.inspect_tasks,
            changes=re.sub(r"^(#+) ", r"#\1 ", inputs.changes, flags=re.M),
            contamination=inputs.contamination,
            audit=inputs.audit,
            validation=inputs.validation,
            lm_eval_configs=[c.name for c in harnessed],
            inspect_requires=" ".join(dict.fromkeys(r for h in harnesses for r in h.requires)),
            lm_eval_metrics=", ".join(
                f"`{m}`" for m in dict.fromkeys(m for h in harnesses for m in h.metrics)
            ),
            scoring_example=inputs.spec.scoring_example,
            tokenizers=[(t.name, t.framing, FRAMINGS[t.framing]) for t in inputs.tokenizers],
            token_counts=token_coverage(inputs.configs) if inputs.tokenizers else [],
            token_table=inputs.token_table,
        )
    except TemplateError as exc:
        raise PublishError(f"{templates}/{inputs.spec.template}: {exc}") from exc
    data = card_data(inputs)
    return DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{body.strip()}\n")


EVAL_YAML_HEADER = """\
# Inspect AI tasks of this dataset: `inspect eval hf/<namespace>/<name>/<task id> --model ...`
# Only Inspect's built-in solvers and scorers can be named here; the description says which of
# the benchmark's own metrics they approximate (see the card's Evaluate section).
"""


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings (prompt templates) as ``|`` blocks."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def inspect_task(config: ExportedConfig, split: str) -> dict[str, Any]:
    """One ``tasks`` item of eval.yaml (Inspect AI's ``HFTask`` keys only)."""
    task = config.spec.inspect
    if task is None:
        raise PublishError(f"config {config.name!r} has no Inspect task")
    field_spec: dict[str, Any] = {"input": task.input, "target": task.target}
    field_spec |= {"metadata": list(task.metadata)} if task.metadata else {}
    missing = [c for c in field_spec_columns(field_spec) if c not in config.features]
    if missing:
        raise PublishError(f"config {config.name!r}: eval.yaml names missing columns {missing}")
    return {
        "id": config.name if split == "test" else f"{config.name}_{split}",
        "config": config.name,
        "split": split,
        "field_spec": field_spec,
        "solvers": [
            {"name": "prompt_template", "args": {"template": task.template}},
            {"name": "generate"},
        ],
        "scorers": [
            {"name": name, "args": dict(args)} if args else {"name": name}
            for name, args in task.scorers
        ],
    }


def field_spec_columns(field_spec: dict[str, Any]) -> list[str]:
    """The columns a ``field_spec`` reads (``literal:`` targets read none)."""
    columns = [v for k, v in field_spec.items() if k != "metadata" and isinstance(v, str)]
    return [c for c in columns if not c.startswith("literal:")] + field_spec.get("metadata", [])


def evaluated_configs(configs: list[ExportedConfig]) -> list[ExportedConfig]:
    """The configs eval.yaml lists: task configs with an Inspect task and a ``test`` split."""
    return [c for c in configs if c.spec.task and c.spec.inspect and "test" in c.splits]


def eval_yaml(spec: DatasetSpec, configs: list[ExportedConfig], version: str) -> str | None:
    """The Hub's benchmark registration for Inspect AI: one task per task config's test split."""
    evaluated = evaluated_configs(configs)
    if not evaluated:
        return None
    notes = dict.fromkeys(c.spec.inspect.unexpressed for c in evaluated if c.spec.inspect)
    description = f"{spec.pretty_name}, version {version}, built with benchsmith."
    description += "".join(f" Scoring: {note}." for note in notes if note)
    document = {
        "name": spec.pretty_name,
        "description": description,
        "evaluation_framework": "inspect-ai",
        "tasks": [inspect_task(c, "test") for c in evaluated],
    }
    return EVAL_YAML_HEADER + yaml.dump(document, Dumper=_BlockDumper, sort_keys=False, width=100)


def baseline_json(path: Path) -> dict[str, Any]:
    """A baselines metrics file, with a clear error when it is not JSON."""
    try:
        return json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise PublishError(f"{path}: baselines metrics are not valid JSON: {exc}") from exc
