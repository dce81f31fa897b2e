"""The ``wikigen_baselines`` key of ``params.yaml``: WikiGenBench's RR and PRR baselines and
their citation scores."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt

from benchsmith_scoring.wikigen_judges import SCORES
from builders.settings import Strict
from pipelines.retrieval.settings import RetrieverName

JudgedScore = Literal["fluency", "info", "outline", "organization", "focus", "coverage"]


class WikigenBaselines(Strict):
    """WikiGenBench's generation baselines (RR and PRR) and their citation scores."""

    retrievers: list[RetrieverName] = Field(
        default_factory=lambda: ["random", "tfidf", "bm25", "dense"],
        description="Rerankers of each entry's chunks for the event title; RR runs with each.",
    )
    top_k: StrictInt = Field(
        10, ge=1, description="Chunks read per article or section (WikiGenBench: 10 is best)."
    )
    context_tokens: StrictInt = Field(
        2048, gt=0, description="Token budget for those chunks (WikiGenBench: 2,048 for 4k models)."
    )
    methods: list[Literal["rr", "prr"]] = Field(
        default_factory=lambda: ["rr", "prr"],
        description="rr: retrieve-then-read; prr: plan an outline, then retrieve and write "
        "each section.",
    )
    prr_retriever: RetrieverName = Field(
        "dense", description="PRR's reranker (WikiGenBench's default is a dense one, DPR)."
    )
    prr_sections: StrictInt = Field(6, ge=1, description="Most sections a PRR outline may have.")
    generate: bool = Field(
        True,
        description="Also write articles through the LLM layer and score their citations; "
        "off: retrieval only.",
    )
    judge_scores: list[JudgedScore] = Field(
        default_factory=lambda: list(SCORES),
        description="WikiGenBench's judged writing and informativeness scores of every written "
        "article: fluency and info (0-5, one call with the paper's prompt), outline (0-5), "
        "organization, focus and coverage (1-5, Prometheus 2's rubric grading); empty: none.",
    )
    meteor: bool = Field(
        True,
        description="METEOR of every written article against the reference, as the paper "
        "computed it with NLG-eval: the METEOR 1.5 jar (pycocoevalcap) with its paraphrase "
        "table, -l en -norm; needs Java (benchsmith check says how to install it).",
    )
    meteor_timeout_s: float = Field(
        120.0,
        gt=0,
        description="Longest the METEOR jar may take over one article (its aligner slows fast "
        "with length); an article past it is kept with METEOR failed and its reason.",
    )
    outline_metrics: bool = Field(
        True,
        description="STORM's heading soft recall and heading entity recall of every written "
        "article's headings (a PRR article's planned outline) against the reference's.",
    )
    outline_encoder: str | None = Field(
        None,
        description="Encoder for STORM's heading soft recall: a name from the embed registry, "
        "or a model folder or hub id. Unset: the packaged all-MiniLM-L6-v2. STORM used "
        "sentence-transformers/paraphrase-MiniLM-L6-v2, which loads by hub id with "
        "BENCHSMITH_HUB_DOWNLOADS=1.",
    )
    outline_entities: Literal["capitalised", "flair"] = Field(
        "capitalised",
        description="Tagger for STORM's heading entity recall: capitalised, an offline "
        "stand-in that is not NER and whose figures are not STORM's; or flair, STORM's "
        "flair/ner-english, which needs `pip install flair==0.13.0` and "
        "BENCHSMITH_HUB_DOWNLOADS=1.",
    )
    splits: list[str] | None = Field(None, description="Entry splits to run on; unset: all.")
