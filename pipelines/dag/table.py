"""The pipeline, declared once: every stage, what it reads and writes, and what it runs.

``dvc.yaml`` (``benchsmith dag --write``), the ``benchsmith stage`` commands and the
missing-input messages are all made from this table, and the ``params.yaml`` model
(:class:`pipelines.settings.Params`) is checked against it. Adding a stage is one entry here, its
field in ``Params``, plus its run function (and a ``summary`` made from the stats the run
returns) in ``pipelines/stages/``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from builders.summhay.settings import SummhaySettings
from builders.wikigen.settings import WikigenSettings
from pipelines.dag.spec import Input, Plot, Shared, Stage
from pipelines.embed.settings import ChunkSettings, EmbedSettings
from pipelines.evaluation.contamination_settings import ContaminationSettings
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.evaluation.summhay_baselines_settings import SummhayBaselines
from pipelines.evaluation.validate_settings import ValidateSettings
from pipelines.evaluation.wikigen_baselines_settings import WikigenBaselines
from pipelines.llm.settings import LLMSettings
from pipelines.publish.registry import DATASETS
from pipelines.publish.reviews import REVIEWS
from pipelines.publish.settings import PublishSettings
from pipelines.publish.statistics import NAMED
from pipelines.retrieval.settings import RetrievalSettings
from pipelines.sources.web.settings import WebSettings
from pipelines.sources.wiki.settings import WikiSettings
from pipelines.synthesis.lveval_settings import LVEvalStageSettings

SECTIONS = {"llm": LLMSettings, "retrieval": RetrievalSettings}
"""Keys of ``params.yaml`` shared by several stages rather than owned by one."""

SHARED: dict[str, Shared] = {
    "llm": Shared(lambda p, where: p.llm, ("llm",)),
    # the dense retriever follows embed.model unless retrieval.dense_model names one
    "retrieval": Shared(lambda p, where: p.resolved_retrieval(), ("retrieval", "embed.model")),
    "embed_cache": Shared(lambda p, where: p.embed.cache),
    # the embed stage's executor, for the baselines that embed their chunks in bulk (where they
    # are embedded does not change what: no parameter of DVC's)
    "embed": Shared(lambda p, where: p.embed),
    # AK as the lveval baselines score it (its mode and per-language thresholds)
    "ak": Shared(
        lambda p, where: p.lveval_baselines,
        ("lveval_baselines.metric_mode", "lveval_baselines.ak_thresholds"),
    ),
    # an item's first release follows from the release windows (not their versions)
    "releases": Shared(lambda p, where: p.releases(), ("publish.history", "wiki.created_before")),
    "root": Shared(lambda p, where: where.root),
    "params_file": Shared(lambda p, where: where.params_file),
    "data": Shared(lambda p, where: where.data),
    # the decisions of people who reviewed a release (benchsmith review), read by publish
    "reviews": Shared(lambda p, where: where.root / REVIEWS),
}
"""What run functions take besides their own settings and inputs, by keyword."""

RENAMED = {
    "sources": "the 'web' key (the web stage's settings)",
    "baselines": (
        "four keys: baselines.summhay -> summhay_baselines, baselines.lveval -> "
        "lveval_baselines, baselines.wikigen -> wikigen_baselines, and baselines.seed, "
        "tokenizer and dense_model -> retrieval"
    ),
}
"""Keys of older ``params.yaml`` files and where their settings live now."""

ARTICLES = Input("articles", "wiki", "articles.parquet", "Selected events.")
DOCUMENTS = Input("documents", "web", "documents.parquet", "Related documents.")
ENTRIES = Input("entries", "wikigen", "entries.parquet", "WikiGenBench entries.")
HAYSTACKS = Input("haystacks", "summhay", "haystacks.parquet", "SummHay haystacks.")
CHUNKS = Input("chunks", "chunk", "chunks.parquet", "Document chunks.")

_STAGES = (
    Stage(
        "wiki",
        "Read wiki pages (XML dump or live API) and select fresh event articles.",
        WikiSettings,
        "pipelines.stages.wiki:run_wiki",
        outs=("articles.parquet", "drops.parquet"),
        files=("wiki.dump.path",),
    ),
    Stage(
        "web",
        "Collect, fetch (live or replayed from the WARC archive) and extract related documents; "
        "every candidate keeps its status and reason.",
        WebSettings,
        "pipelines.stages.web:run_web",
        inputs=(ARTICLES,),
        outs=("documents.parquet",),
        files=("web.archive", "web.search_log"),
    ),
    Stage(
        "wikigen",
        "Assemble WikiGenBench entries: article, documents, split.",
        WikigenSettings,
        "pipelines.stages.wikigen:run_wikigen",
        inputs=(ARTICLES, DOCUMENTS),
        outs=("entries.parquet",),
    ),
    Stage(
        "summhay",
        "Synthesize verified SummHay haystacks through the LLM layer (template backend offline); "
        "drops keep their reasons, official/ holds SummHay's public layout.",
        SummhaySettings,
        "pipelines.stages.summhay:run_summhay",
        inputs=(
            replace(ARTICLES, needed=lambda s: s.topics_from_events > 0),
            replace(
                DOCUMENTS,
                help="Web documents whose sentences fill template documents.",
                needed=lambda s: False,
            ),
        ),
        outs=("haystacks.parquet", "orders.parquet", "drops.parquet", "official"),
        prompts=("reask.j2", "summhay"),
        uses=("llm",),
    ),
    Stage(
        "summhay_baselines",
        "SummHay reference baselines: retrieval bounds and summarize-then-judge scores per "
        "retriever; official/ holds the haystacks, retriever scores, summaries and verdicts in "
        "SummHay's public layout.",
        SummhayBaselines,
        "pipelines.stages.summhay_baselines:run_summhay_baselines",
        inputs=(HAYSTACKS,),
        outs=("summhay_contexts.parquet", "summhay_scores.parquet", "official"),
        metrics=("summhay.json", "stats.json"),
        prompts=("reask.j2", "summhay/summarize.j2", "summhay/judge.j2"),
        uses=("llm", "retrieval", "embed_cache"),
    ),
    Stage(
        "chunk",
        "Split documents into chunks of words or tokens with character and word offsets.",
        ChunkSettings,
        "pipelines.stages.chunk:run_chunk",
        inputs=(
            replace(DOCUMENTS, needed=lambda s: "web" in s.corpora),
            replace(HAYSTACKS, needed=lambda s: "summhay" in s.corpora),
        ),
        outs=("chunks.parquet", "drops.parquet"),
    ),
    Stage(
        "embed",
        "Embed every chunk (cached by model and text), on CPU, GPUs or a Ray cluster.",
        EmbedSettings,
        "pipelines.stages.embed:run_embed",
        inputs=(CHUNKS,),
        outs=("vectors",),
    ),
    Stage(
        "lveval",
        "Build LV-Eval-style sets: QA items at every length level, clean and with CFI and KPR "
        "(records, L-Eval's layout, proposed rules, drops).",
        LVEvalStageSettings,
        "pipelines.stages.lveval:run_lveval",
        inputs=(replace(ENTRIES, needed=lambda s: s.events.enabled),),
        outs=("qa.parquet", "records", "leval", "rules.jsonl", "drops.parquet"),
        tokenizers=("lveval.tokenizer",),
        prompts=(
            "reask.j2",
            "lveval/questions.j2",
            "lveval/confusing_fact.j2",
            "lveval/keywords.j2",
            "lveval/answer.j2",
        ),
        uses=("llm", "root", "releases"),
    ),
    Stage(
        "lveval_baselines",
        "Evidence recall per retriever and AK scores of a generation baseline, per length level "
        "and variant.",
        LVEvalBaselines,
        "pipelines.stages.lveval_baselines:run_lveval_baselines",
        inputs=(Input("records", "lveval", "records", "LV-Eval records."),),
        outs=("retrieval.parquet", "answers.parquet"),
        metrics=("lveval.json", "stats.json"),
        plots=(
            Plot(
                "ak_by_level.csv",
                "LV-Eval baseline, AK score by length level",
                "level_words",
                ("clean", "cfi", "kpr", "cfi_kpr"),
            ),
            Plot(
                "recall_by_level.csv",
                "LV-Eval evidence recall (clean) by length level",
                "level_words",
                ("random", "bm25", "dense"),
            ),
        ),
        prompts=("reask.j2", "lveval/answer.j2"),
        uses=("llm", "retrieval", "embed_cache", "embed"),
    ),
    Stage(
        "wikigen_baselines",
        "WikiGenBench's RR and PRR baselines: rerank each entry's chunks, write articles with "
        "citations, and judge every citation.",
        WikigenBaselines,
        "pipelines.stages.wikigen_baselines:run_wikigen_baselines",
        inputs=(ENTRIES, CHUNKS),
        outs=("retrieval.parquet", "articles.parquet"),
        metrics=("wikigen.json", "stats.json"),
        prompts=("reask.j2", "wikigen"),
        uses=("llm", "retrieval", "embed_cache"),
    ),
    Stage(
        "contamination",
        "Contamination probe: the configured model answers every LV-Eval question and writes "
        "every WikiGenBench article closed-book, scored with the baselines' metrics; flagged "
        "shares before and after the declared knowledge cutoff.",
        ContaminationSettings,
        "pipelines.stages.contamination:run_contamination",
        inputs=(
            Input(
                "qa",
                "lveval",
                "qa.parquet",
                "The LV-Eval QA items.",
                needed=lambda s: "lveval" in s.datasets,
            ),
            replace(
                ENTRIES,
                help="The WikiGenBench entries: titles, reference articles, creation dates.",
            ),
        ),
        outs=("items.parquet",),
        metrics=("contamination.json", "stats.json"),
        prompts=("reask.j2", "lveval/answer.j2", "wikigen/rr.j2"),
        uses=("llm", "ak"),
    ),
    Stage(
        "validate",
        "Reference panel: every model answers each LV-Eval item with its gold evidence only, "
        "closed-book and with another item's evidence, judges whether each WikiGenBench "
        "entry's documents support its lead, and looks for each SummHay insight in its "
        "documents; items are labelled solvable, closed_book and difficulty.",
        ValidateSettings,
        "pipelines.stages.validate:run_validate",
        inputs=(
            Input(
                "qa",
                "lveval",
                "qa.parquet",
                "The LV-Eval QA items and their evidence.",
                needed=lambda s: "lveval" in s.datasets,
            ),
            Input(
                "records",
                "lveval",
                "records",
                "The LV-Eval records: each item's full context at the shortest level.",
                needed=lambda s: "lveval" in s.datasets and s.full_context,
            ),
            replace(
                ENTRIES,
                help="The WikiGenBench entries: their leads.",
                needed=lambda s: "wikigenbench" in s.datasets,
            ),
            replace(
                CHUNKS,
                help="The entries' documents in chunks: the premises of the lead's sentences.",
                needed=lambda s: "wikigenbench" in s.datasets,
            ),
            replace(
                HAYSTACKS,
                help="The SummHay haystacks: insights and their documents.",
                needed=lambda s: "summhay" in s.datasets,
            ),
        ),
        outs=("answers.parquet", "labels.parquet"),
        metrics=("validate.json", "stats.json"),
        prompts=("reask.j2", "lveval/answer.j2", "wikigen/entails.j2", "summhay/inclusion.j2"),
        uses=("llm", "ak"),
    ),
)


def _producer(path: str, stages: tuple[Stage, ...]) -> Input:
    """The input for ``<stage>/<path>`` (a file, or something inside an output folder)."""
    stage, _, rest = path.partition("/")
    for candidate in stages:
        if candidate.name != stage:
            continue
        for out in candidate.writes():
            if rest == out or rest.startswith(f"{out}/"):
                return Input("", stage, out)
    raise ValueError(f"publish reads {path}, which no stage in the table writes")


def _publish(stages: tuple[Stage, ...]) -> Stage:
    """The publish stage: its inputs and params come from the dataset registry."""
    reads = [p for spec in DATASETS.values() for p in spec.reads()]
    reads += [p for spec in DATASETS.values() for s in spec.statistics for p in NAMED[s].sources]
    reads += [f"{s.name}/stats.json" for s in stages]  # what each run did, for the changelog
    inputs = tuple(dict.fromkeys(_producer(p, stages) for p in reads))
    params = tuple(dict.fromkeys(k for spec in DATASETS.values() for k in spec.params))
    return Stage(
        "publish",
        "Export every dataset in publish.datasets in the Hub's layout, with cards; push if asked.",
        PublishSettings,
        "pipelines.stages.publish:run_publish",
        inputs=inputs,
        outs=tuple(DATASETS),
        params=params,
        uses=("data", "root", "params_file", "releases", "reviews"),
        # the scorers every export ships; earlier releases' records (benchsmith refresh); the
        # reviews of releases (benchsmith review)
        data_deps=("cards", "benchsmith_scoring", "releases", REVIEWS),
        tokenizers=("publish.tokenizers",),
    )


STAGES: dict[str, Stage] = {s.name: s for s in (*_STAGES, _publish(_STAGES))}
"""Every stage by name, in the order ``dvc.yaml`` lists them (producers first)."""


def stage_of(path: Path) -> str | None:
    """The stage whose output ``path`` is, or lies inside (``.../<stage>/<output>/...``)."""
    parts = path.parts
    for stage in STAGES.values():
        for out in stage.writes():
            want = (stage.name, *Path(out).parts)
            if any(parts[i : i + len(want)] == want for i in range(len(parts))):
                return stage.name
    return None
