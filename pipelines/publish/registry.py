"""Which tables each published dataset is made of: adding a dataset is an entry here plus a card
template in ``cards/``, not new code."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchsmith_scoring import prompts, wikigen_judges


@dataclass(frozen=True)
class Join:
    """Columns taken from another table by a shared key (e.g. a vector's chunk -> its entry)."""

    source: str
    key: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Dated:
    """How a config's rows reach their event, for the dating columns (``pipelines.publish.
    dating``): the column ``key`` holds the event id (a SummHay ``source`` may prefix it with
    ``event:``), or ``via`` maps it to a column that does."""

    key: str
    via: Join | None = None


@dataclass(frozen=True)
class InspectTask:
    """How ``eval.yaml`` has Inspect AI run a task config: the columns of its ``field_spec``, a
    ``prompt_template`` (``{prompt}`` is ``input``; ``{column}`` any ``metadata`` column),
    ``generate``, and Inspect's built-in scorers (eval.yaml can name no others).

    ``unexpressed`` says which of the benchmark's own metrics the built-in scorers miss; it goes
    to the eval.yaml description and the card."""

    input: str
    target: str
    template: str
    scorers: tuple[tuple[str, dict[str, object]], ...]
    metadata: tuple[str, ...] = ()
    unexpressed: str = ""


@dataclass(frozen=True)
class HarnessTask:
    """How the generated lm-evaluation-harness tasks (and the Inspect task module) run a task
    config: functions of ``benchsmith_scoring.harness`` for the prompt and the scores, the
    metrics those return, the target column and the completion cap."""

    prompt: str
    results: str
    metrics: tuple[str, ...]
    target: str
    max_gen_toks: int
    inspect_task: str
    """The builder in ``benchsmith_scoring.inspect_ai_tasks`` of its Inspect AI task."""
    requires: tuple[str, ...] = ("jinja2", "bpe-openai")
    """Packages the shipped prompt and scorer import beyond the harness's own (lm-eval has
    them all; Inspect AI does not): bpe-openai counts a request in an OpenAI encoding when a
    task is given a window (``tokenizers`` does for a ``tokenizer.json``)."""
    lm_eval: bool = True
    """Whether lm-eval can run it: its ``process_results`` cannot call a judge model."""
    inspect_options: tuple[str, ...] = ()
    """Integer ``-T`` options of its Inspect task beyond every task's (unset: the task's
    default), passed through by the generated task."""


@dataclass(frozen=True)
class ConfigSpec:
    """One Hub config: a logical table, read from one or more stage outputs under ``data/``.

    A ``source`` with a ``*`` gives one config per file, named by ``name`` with ``{stem}``
    replaced; ``group_by`` gives one config per distinct value of a column (``{value}``), of each
    file when both are given, ordered by ``group_order`` first. Rows go to the split named
    ``split``, to the split in column ``split_column``, or to the split of the entry whose id is
    in column ``split_key`` (the dataset's ``split_index``).

    ``view`` names a function of ``pipelines.publish.views.VIEWS`` applied to the source rows
    first (e.g. one row per subtopic), or of ``DATA_VIEWS``, which also reads the stage outputs
    ``view_reads`` names; ``rename`` (source, published) and ``first_of``
    (scalar column, list column it takes the first value of) are applied last, so
    ``text_column`` and ``first_of`` name published columns.
    """

    name: str
    source: str
    description: str
    split: str = "test"
    split_column: str | None = None
    split_key: str | None = None
    where: tuple[tuple[str, str], ...] = ()
    join: Join | None = None
    group_by: str | None = None
    group_order: tuple[str, ...] = ()
    view: str | None = None
    view_reads: tuple[str, ...] = ()
    vectors: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    url_only_drop: tuple[str, ...] = ()
    rename: tuple[tuple[str, str], ...] = ()
    first_of: tuple[tuple[str, str], ...] = ()
    text_column: str | None = None
    optional: bool = False
    task: bool = False
    inspect: InspectTask | None = None
    """The config's task in ``eval.yaml`` (task configs only)."""
    harness: HarnessTask | None = None
    """The config's lm-evaluation-harness task, scored by the shipped scorers."""
    dated: Dated | None = None
    """How its rows reach their event: they gain event_created_at, event_date, first_release."""
    ids: tuple[str, ...] = ()
    """The columns that name an item: the release record and changelog follow items by them."""
    fields: tuple[tuple[str, str], ...] = ()
    """``(field, description)`` of its fields whose meaning here differs from the card's shared
    description (``pipelines.publish.card.FIELD_DOCS``)."""
    labelled: str | None = None
    """How its rows reach the reference panel's labels (:mod:`pipelines.publish.labels`):
    ``qa_id``, ``event_id`` or ``insights``; ``None``: its rows are not validated items."""
    tokens: str | None = None
    """What its ``tokens`` column counts in each of ``publish.tokenizers`` (None: no column):
    ``"request"``, the request its harness task sends (``harness.prompt`` of the row, framed as
    each tokenizer's chat, plus the reference answer in ``harness.target``); or the name of a
    text in :data:`pipelines.publish.views.TEXTS`, counted alone."""


@dataclass(frozen=True)
class Plot:
    """A line chart drawn from a CSV the baselines write (x column against y columns)."""

    source: str
    x: str
    ys: tuple[str, ...]
    title: str
    xlabel: str
    ylabel: str


WIKIPEDIA_TERMS = (
    "[CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/); attribution: Wikipedia "
    "contributors (each article's URL is in the wikigenbench `entries` config)"
)
WEB_TERMS = (
    "Not relicensed: the text remains its publishers' and is included for research under "
    "their own terms (each document's URL is in the wikigenbench `documents` config)"
)
GENERATED_TERMS = (
    "[CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/), subject to the terms of "
    "the model that generated it (named under Provenance; none for the template backend)"
)
OWN_TERMS = "[CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/)"
LICENSE_FILE = "LICENSE.md"
"""The file of the export a card with ``license: other`` links to (``license_link``)."""


@dataclass(frozen=True)
class DatasetSpec:
    """A published dataset: its configs, card metadata, statistics and provenance inputs."""

    name: str
    pretty_name: str
    template: str
    configs: tuple[ConfigSpec, ...]
    license: str
    task_categories: tuple[str, ...]
    tags: tuple[str, ...]
    size_from: str
    params: tuple[str, ...]
    split_index: tuple[str, str, str] | None = None
    statistics: tuple[str, ...] = ()
    baselines: tuple[str, ...] = ()
    plots: tuple[Plot, ...] = ()
    source_datasets: tuple[str, ...] = ("original",)
    language: tuple[str, ...] = ("en",)
    citations: tuple[str, ...] = field(default_factory=tuple)
    license_name: str | None = None
    """The card's ``license_name`` when ``license`` is ``other`` (terms differ by source)."""
    license_terms: tuple[tuple[str, str], ...] = ()
    """``(which text, its terms)`` for every source of text; written to the card and LICENSE.md."""
    scoring_example: str = ""
    """Python lines calling the shipped scorer on one row, for the card's Evaluate section."""
    contamination: bool = False
    """Whether the card reports the contamination probe (its items are probed closed-book)."""
    validated: bool = False
    """Whether its items carry the reference panel's labels (the validate stage)."""
    web_text_inside: str = ""
    """Why the dataset's own text holds web document text that URL-only mode cannot strip
    ('' when it holds none); such a dataset is refused with ``publish.documents: urls``."""

    def reads(self) -> list[str]:
        """The stage outputs under ``data/`` its configs, split index, baselines and plots read
        (its statistics name theirs); each is ``<stage>/<path in that stage's folder>``."""
        paths = [c.source for c in self.configs]
        paths += [c.join.source for c in self.configs if c.join]
        paths += [p for c in self.configs for p in c.view_reads]
        paths += [c.dated.via.source for c in self.configs if c.dated and c.dated.via]
        paths += [ENTRIES] if any(c.dated for c in self.configs) else []  # the events' dates
        paths += [CONTAMINATION] if self.contamination else []
        paths += [LABELS, PANEL_REPORT] if self.validated else []
        paths += [self.split_index[0]] if self.split_index else []
        return [*paths, *self.baselines, *(p.source for p in self.plots)]


ENTRIES = "wikigen/entries.parquet"
CHUNKS = "chunk/chunks.parquet"
CONTAMINATION = "contamination/contamination.json"
LABELS = "validate/labels.parquet"
PANEL_REPORT = "validate/validate.json"
LVEVAL_TASK = InspectTask(
    input="question",
    target="answer",
    metadata=("context",),
    # the baseline's own prompt, with Inspect's placeholders for the question and the context
    template=prompts.text(
        "lveval/answer", {"context": "{context}", "question": "{prompt}", "length_instruction": ""}
    ),
    scorers=(("includes", {}), ("f1", {})),
    unexpressed=(
        "LV-Eval's AK metric (answer-keyword recall gate, then F1) needs `answer_keywords` and "
        "a custom scorer; `includes` (the answer appears in the output) and `f1` (token F1 "
        "against `answer`) approximate it"
    ),
)
SUMMHAY_TASK = InspectTask(
    input="query",
    target="reference",
    metadata=("context",),
    template=(
        "Below are documents labelled `Document N:`.\n\n{context}\n\n{prompt}\n"
        "Answer in bullet points; after each bullet cite its documents as [N]."
    ),
    scorers=(("model_graded_qa", {"partial_credit": True}),),
    unexpressed=(
        "SummHay's coverage score is judged per insight and its citation score checks the "
        "cited documents against each insight's gold documents; `model_graded_qa` with partial "
        "credit grades the whole summary against all reference insights at once, and citations "
        "are not scored"
    ),
)
WIKIGEN_TASK = InspectTask(
    input="title",
    target="article",
    metadata=("outline_text",),
    template=(
        'Write the Wikipedia article "{prompt}": a lead, then these sections under their '
        "Markdown headings:\n\n{outline_text}"
    ),
    scorers=(("f1", {}),),
    unexpressed=(
        "WikiGenBench retrieves from the entry's `documents` and scores citations; eval.yaml "
        "cannot retrieve, so this task is closed-book, and `f1` scores only token overlap with "
        "the reference article"
    ),
)
LVEVAL_HARNESS = HarnessTask(
    prompt="lveval_prompt",
    results="lveval_results",
    metrics=("ak", "ak_code"),
    target="answer",
    max_gen_toks=64,  # LV-Eval's generation cap for its QA sets
    inspect_task="lveval_task",
)
WIKIGEN_HARNESS = HarnessTask(
    prompt="wikigen_prompt",
    results="wikigen_results",
    metrics=("rouge_l",),
    target="article",
    max_gen_toks=1024,
    inspect_task="wikigen_task",
    requires=("jinja2", "bpe-openai", "rouge-score"),
)
RR_RERANKER = "dense"
"""The reranker whose RR contexts are published (``rr_contexts``): the paper's default, DPR
(WikiGenBench, Section 4.1), is the toolkit's dense retriever."""
WIKIGEN_RR_HARNESS = HarnessTask(
    prompt="wikigen_rr_messages",
    results="",
    metrics=(
        "rouge_l",
        "citation_recall",
        "citation_precision",
        "citation_rate",
        *map(wikigen_judges.column, wikigen_judges.SCORES),
    ),
    target="reference",
    max_gen_toks=1024,
    inspect_task="wikigenbench_rr",
    requires=("jinja2", "bpe-openai", "rouge-score", "nltk"),
    lm_eval=False,
    inspect_options=("judge_tokens",),
)
SUMMHAY_HARNESS = HarnessTask(
    prompt="summhay_messages",
    results="",
    metrics=("coverage", "citation", "joint"),
    target="reference",
    max_gen_toks=1024,
    inspect_task="summhay_task",
    lm_eval=False,
)
REQUEST = "request"
"""``ConfigSpec.tokens`` of a task config: it counts the request its harness task sends."""
VARIANTS = ("clean", "cfi", "kpr", "cfi_kpr")
"""LV-Eval's variants, in the order their configs are listed (the first level's clean one is the
default config)."""

DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec(
            name="wikigenbench",
            pretty_name="WikiGenBench (fresh events)",
            template="wikigenbench.md.j2",
            configs=(
                ConfigSpec(
                    "entries",
                    ENTRIES,
                    "One Wikipedia event article per row, with its outline, sections and the "
                    "related documents it cites or that search found; `outline_text` and "
                    "`article` (the reference article) are what eval.yaml prompts with and scores.",
                    split_column="split",
                    url_only_drop=("documents.text",),
                    text_column="word_count",
                    fields=(
                        (
                            "word_count",
                            "Length of the reference article's lead and section texts in "
                            "whitespace-separated words (characters, whitespace not counted, on "
                            "Chinese and Japanese wikis); headings not counted.",
                        ),
                    ),
                    view="wikigen_entries",
                    task=True,
                    inspect=WIKIGEN_TASK,
                    harness=WIKIGEN_HARNESS,
                    tokens=REQUEST,
                    dated=Dated("event_id"),
                    ids=("event_id",),
                    labelled="event_id",
                ),
                ConfigSpec(
                    "documents",
                    "web/documents.parquet",
                    "Every related document found for an event, with how fetching it ended "
                    "(ok, dead, robots, ...) and its extracted text.",
                    split_key="event_id",
                    url_only_drop=("text", "snippet"),
                    text_column="text",
                    dated=Dated("event_id"),
                    ids=("doc_id",),
                    tokens="document_text",
                ),
                ConfigSpec(
                    "chunks",
                    CHUNKS,
                    "Related documents cut into retrieval chunks with character and word offsets.",
                    split_key="entry_id",
                    where=(("corpus", "web"),),
                    drop=("corpus",),
                    url_only_drop=("text",),
                    text_column="text",
                    dated=Dated("entry_id"),
                    ids=("chunk_id",),
                ),
                ConfigSpec(
                    "embeddings_{value}",
                    "embed/vectors/embeddings.parquet",
                    "One vector per chunk from the named encoder (join on chunk_id).",
                    split_key="entry_id",
                    join=Join("chunk/chunks.parquet", "chunk_id", ("entry_id", "corpus")),
                    where=(("corpus", "web"),),
                    group_by="model",
                    vectors=("vector",),
                    drop=("corpus",),
                    optional=True,
                    dated=Dated("entry_id"),
                    ids=("chunk_id",),
                ),
                ConfigSpec(
                    "rr_contexts",
                    "wikigen_baselines/retrieval.parquet",
                    "Per entry, the chunks the toolkit's RR baseline read with the "
                    f"`{RR_RERANKER}` reranker (WikiGenBench's default, DPR; its encoder is "
                    "`dense_model` under Baselines), in the order shown and numbered as the RR "
                    "prompt numbers them (`documents.n`); `reference` is the text the baseline's "
                    "ROUGE-L is scored against (the lead and the sections' texts). The "
                    "`wikigenbench_rr` Inspect task writes from these and judges the citations.",
                    split_column="split",
                    where=(("retriever", RR_RERANKER),),
                    view="wikigen_rr_contexts",
                    view_reads=(CHUNKS, ENTRIES),
                    fields=(
                        ("retriever", "The reranker that chose the chunks."),
                        (
                            "documents",
                            "The chunks shown, in order: `n` (the number the RR prompt gives "
                            "the chunk and citations use), `chunk_id`, `document_id` and `text` "
                            "(of the chunks config).",
                        ),
                        (
                            "reference",
                            "The reference text ROUGE-L is scored against, as the toolkit "
                            "scores it: the lead, then every section's text, paragraphs apart "
                            "(no headings).",
                        ),
                        (
                            "context_tokens",
                            "Tokens of the chunks shown, in the toolkit's `retrieval.tokenizer`: "
                            "what the `wikigen_baselines.context_tokens` budget was filled with.",
                        ),
                        (
                            "reference_recall",
                            "Share of the reference's numbers and capitalised names found in "
                            "the chunks shown (the toolkit's bound on what a reader could state).",
                        ),
                    ),
                    url_only_drop=("documents.text",),
                    text_column="documents.text",
                    task=True,
                    harness=WIKIGEN_RR_HARNESS,
                    tokens=REQUEST,
                    dated=Dated("event_id"),
                    ids=("event_id",),
                    labelled="event_id",
                ),
            ),
            license="other",
            license_name="wikipedia-cc-by-sa-4.0-and-web-text",
            license_terms=(
                (
                    "Wikipedia article text (entries: title, summary, outline, sections, infobox, "
                    "references)",
                    WIKIPEDIA_TERMS,
                ),
                (
                    "Web documents' text (documents: text, snippet; chunks: text; the documents "
                    "inside entries)",
                    WEB_TERMS,
                ),
                ("Ids, splits, offsets, counts, crawl outcomes and embeddings", OWN_TERMS),
            ),
            task_categories=("text-generation", "summarization"),
            tags=("wikipedia", "long-context", "retrieval-augmented-generation", "benchsmith"),
            size_from="entries",
            params=(
                "wiki",
                "web",
                "wikigen",
                "chunk",
                "embed",
                "llm",
                "retrieval",
                "wikigen_baselines",
            ),
            split_index=(ENTRIES, "event_id", "split"),
            statistics=(
                "documents_per_entry",
                "crawl_outcomes",
                "archived_copies",
                "wiki_rejections",
            ),
            baselines=("wikigen_baselines/wikigen.json",),
            citations=("wikigenbench",),
            contamination=True,
            validated=True,
            scoring_example=(
                "from benchsmith_scoring.leval.metrics import rouge\n"
                'rouge(generated, row["article"], stem=True).rougeL  # WikiGenBench\'s ROUGE-L\n'
                "from benchsmith_scoring.prompts import messages\n"
                'messages("wikigen/rr", {"title": ..., "documents": [...]})  # the RR prompt'
            ),
        ),
        DatasetSpec(
            name="summhay",
            pretty_name="Summary of a Haystack (fresh events)",
            template="summhay.md.j2",
            configs=(
                ConfigSpec(
                    "subtopics",
                    "summhay/haystacks.parquet",
                    "One row per topic and subtopic, ready to prompt: the subtopic's query, its "
                    "reference insights (gold documents by id and by citation number; as one "
                    "bullet list in `reference`, the eval.yaml target), and the "
                    "whole haystack as one context, documents labelled `Document N:` in haystack "
                    "order (the numbers citations use). The haystack repeats in every subtopic "
                    "of its topic.",
                    view="summhay_subtopics",
                    task=True,
                    inspect=SUMMHAY_TASK,
                    harness=SUMMHAY_HARNESS,
                    tokens=REQUEST,
                    dated=Dated("source"),
                    ids=("topic_id", "subtopic_id"),
                    labelled="insights",
                ),
                ConfigSpec(
                    "haystacks",
                    "summhay/haystacks.parquet",
                    "One haystack per topic: subtopics, insights with their gold documents, and "
                    "the documents that repeat them.",
                    text_column="documents.text",
                    fields=(
                        (
                            "documents",
                            "The haystack's documents in haystack order (Document N is the "
                            "N-th): text, the subtopics and insights each repeats, generation "
                            "attempts, and `word_count`, the text's whitespace-separated words.",
                        ),
                    ),
                    dated=Dated("source"),
                    ids=("topic_id",),
                    tokens="haystack_context",
                    labelled="insights",
                ),
            ),
            license="other",
            license_name="generated-text-and-wikipedia-cc-by-sa-4.0",
            license_terms=(
                (
                    "Generated text (topics, subtopics, queries, insights, documents, contexts)",
                    GENERATED_TERMS,
                ),
                (
                    "Topics taken from Wikipedia events (`source` starting with `event:`)",
                    WIKIPEDIA_TERMS,
                ),
                ("Ids, counts and provenance fields", OWN_TERMS),
            ),
            task_categories=("summarization",),
            tags=("long-context", "summarization", "citation", "benchsmith"),
            size_from="haystacks",
            params=("summhay", "llm", "retrieval", "summhay_baselines"),
            statistics=("summhay_drops",),
            baselines=("summhay_baselines/summhay.json",),
            citations=("summhay",),
            validated=True,
            scoring_example=(
                "from benchsmith_scoring.summhay import parse_summary\n"
                "parse_summary(summary)  # bullets and the document numbers each cites\n"
                "from benchsmith_scoring.prompts import messages\n"
                'messages("summhay/judge", {"bullets": bullets, "insight": insight})  # the judge'
            ),
        ),
        DatasetSpec(
            name="lveval",
            pretty_name="LV-Eval-style long-context QA (fresh events)",
            template="lveval.md.j2",
            configs=(
                ConfigSpec(
                    "{stem}_{value}",
                    "lveval/records/*.parquet",
                    "Every QA item at one length level in one variant (the config name ends with "
                    "it: clean, cfi, kpr or cfi_kpr); LV-Eval's `input` is `question` here.",
                    group_by="variant",
                    group_order=VARIANTS,
                    rename=(("input", "question"),),
                    first_of=(("answer", "answers"),),
                    text_column="context",
                    task=True,
                    inspect=LVEVAL_TASK,
                    harness=LVEVAL_HARNESS,
                    tokens=REQUEST,
                    dated=Dated("qa_id", Join("lveval/qa.parquet", "qa_id", ("source",))),
                    ids=("qa_id",),
                    labelled="qa_id",
                ),
                ConfigSpec(
                    "qa",
                    "lveval/qa.parquet",
                    "The QA items themselves, with their evidence, before any context is built.",
                    first_of=(("answer", "answers"),),
                    dated=Dated("source"),
                    ids=("qa_id",),
                    labelled="qa_id",
                ),
            ),
            license="other",
            license_name="web-text-and-cc-by-sa-4.0",
            license_terms=(
                ("Contexts' passages from web documents", WEB_TERMS),
                ("Questions, answers and evidence drawn from Wikipedia articles", WIKIPEDIA_TERMS),
                (
                    "Generated text (LLM questions, confusing facts, KPR replacement names)",
                    GENERATED_TERMS,
                ),
                ("Ids, positions, levels and counts", OWN_TERMS),
            ),
            task_categories=("question-answering",),
            tags=("long-context", "question-answering", "lv-eval", "l-eval", "benchsmith"),
            size_from="qa",
            params=("lveval", "llm", "retrieval", "lveval_baselines"),
            statistics=("lveval_drops",),
            baselines=("lveval_baselines/lveval.json",),
            plots=(
                Plot(
                    "lveval_baselines/ak_by_level.csv",
                    "level_words",
                    ("clean", "cfi", "kpr", "cfi_kpr"),
                    "Reference baseline: AK score by length level",
                    "length level (words)",
                    "AK score",
                ),
            ),
            citations=("lveval", "leval"),
            contamination=True,
            validated=True,
            scoring_example=(
                "from benchsmith_scoring.lveval import ak_score\n"
                'ak_score(prediction, row["answers"], row["answer_keywords"],\n'
                '         language=row["language"], mode="readme").score  # LV-Eval\'s AK'
            ),
            web_text_inside="its contexts are assembled from web document passages",
        ),
    )
}
