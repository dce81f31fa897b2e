"""The ``benchsmith`` command: thin typer wrappers over keyword-only stage functions."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pipelines import __version__
from pipelines.errors import BenchsmithError, ParamsError
from pipelines.progress import setup_logging
from pipelines.settings import load_params
from pipelines.stats import StageStats

app = typer.Typer(
    help=(
        "Build long-context and Wikipedia-generation benchmarks from fresh sources.\n\n"
        "Maintainers normally run `dvc repro`, which calls `benchsmith stage NAME` for each stage "
        "in dvc.yaml; settings live in params.yaml."
    ),
    no_args_is_help=True,
    add_completion=False,
)
stage_app = typer.Typer(
    help="Run one pipeline stage (what dvc.yaml calls). Settings come from params.yaml.",
    no_args_is_help=True,
)
app.add_typer(stage_app, name="stage")
console = Console(stderr=True)
T = TypeVar("T")

ParamsOption = Annotated[
    Path, typer.Option("--params", "-p", help="Settings file.", show_default=True)
]
DATA_ROOT = Path("data")
ArticlesOption = Annotated[Path, typer.Option(help="Selected events (the wiki stage's output).")]
DocumentsOption = Annotated[Path, typer.Option(help="Related documents (the web stage's output).")]
ARTICLES = DATA_ROOT / "wiki" / "articles.parquet"
HAYSTACKS = DATA_ROOT / "summhay" / "haystacks.parquet"
DOCUMENTS = DATA_ROOT / "web" / "documents.parquet"
EntriesOption = Annotated[
    Path, typer.Option(help="WikiGenBench entries (the wikigen stage's output).")
]
ENTRIES = DATA_ROOT / "wikigen" / "entries.parquet"


def _guarded(run: Callable[[], T]) -> T:
    """Run library code; turn benchsmith's own errors into a short message and an exit code."""
    try:
        return run()
    except BenchsmithError as exc:
        raise _fail(exc) from None


def _fail(exc: BenchsmithError) -> typer.Exit:
    console.print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
    return typer.Exit(code=2 if isinstance(exc, ParamsError) else 1)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"benchsmith {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging.")] = False,
) -> None:
    """Benchsmith command line."""
    setup_logging(logging.DEBUG if verbose else logging.INFO)


@app.command("check")
def check(params: ParamsOption = Path("params.yaml")) -> None:
    """Validate params.yaml and report the first problems found, naming each key."""
    _guarded(lambda: load_params(params))
    typer.echo(f"{params}: ok")


@stage_app.command("wiki")
def stage_wiki(
    params: ParamsOption = Path("params.yaml"),
    out: Annotated[Path, typer.Option(help="Output folder.")] = DATA_ROOT / "wiki",
) -> None:
    """Read wiki pages (XML dump or live API) and select fresh event articles.

    Writes OUT/articles.parquet, OUT/rejected.parquet (one reason per page) and OUT/stats.json.
    """
    from pipelines.stages.wiki import run_wiki

    stats = _guarded(lambda: run_wiki(load_params(params).wiki, out))
    counts = stats.counts
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(stats.dropped.items())) or "none"
    typer.echo(
        f"wiki: {counts['read']} pages read, {counts['selected']} events selected, "
        f"{counts['rejected']} rejected ({reasons}) in {stats.duration_s:.1f} s -> {out}/"
    )


@stage_app.command("web")
def stage_web(
    params: ParamsOption = Path("params.yaml"),
    articles: ArticlesOption = ARTICLES,
    out: Annotated[Path, typer.Option(help="Output folder.")] = DATA_ROOT / "web",
) -> None:
    """Collect, fetch (live or replayed from the WARC archive) and extract related documents.

    Writes OUT/documents.parquet (every candidate with its status and reason) and OUT/stats.json.
    """
    from pipelines.stages.web import run_web

    stats = _guarded(lambda: run_web(load_params(params).sources, articles, out))
    ok = sum(v for k, v in stats.counts.items() if k.endswith("_ok"))
    typer.echo(
        f"web: {stats.counts['candidates']} candidate documents for {stats.counts['events']} "
        f"events, {ok} ok, {sum(stats.dropped.values())} dropped -> {out}/"
    )


@stage_app.command("wikigen")
def stage_wikigen(
    params: ParamsOption = Path("params.yaml"),
    articles: ArticlesOption = ARTICLES,
    documents: DocumentsOption = DOCUMENTS,
    out: Annotated[Path, typer.Option(help="Output folder.")] = DATA_ROOT / "wikigen",
) -> None:
    """Assemble WikiGenBench entries (article, documents, split); writes OUT/entries.parquet."""
    from pipelines.stages.wikigen import run_wikigen

    stats = _guarded(lambda: run_wikigen(load_params(params).wikigen, articles, documents, out))
    c = stats.counts
    typer.echo(
        f"wikigen: {c['entries']} entries ({c['split_train']} train, {c['split_test']} test), "
        f"{c['documents']} documents -> {out}/"
    )


@stage_app.command("summhay")
def stage_summhay(
    params: ParamsOption = Path("params.yaml"),
    articles: ArticlesOption = ARTICLES,
    documents: DocumentsOption = DOCUMENTS,
    out: Annotated[Path, typer.Option(help="Output folder.")] = DATA_ROOT / "summhay",
) -> None:
    """Synthesize verified SummHay haystacks through the LLM layer (template backend offline).

    Writes OUT/haystacks.parquet, OUT/orders.parquet (position variants), OUT/drops.parquet
    (every item left out, with its reason), OUT/official/*.json (SummHay's public layout) and
    OUT/stats.json with calls, cache hits, tokens and cost.
    """
    from pipelines.stages.summhay import run_summhay

    def run() -> StageStats:
        p = load_params(params)
        return run_summhay(p.summhay, p.llm, out, articles_path=articles, documents_path=documents)

    stats = _guarded(run)
    c = stats.counts
    typer.echo(
        f"summhay: {c['haystacks']} of {c['topics']} haystacks, {c['subtopics']} subtopics, "
        f"{c['insights']} insights, {c['documents']} documents, "
        f"{sum(stats.dropped.values())} items dropped -> {out}/"
    )


@stage_app.command("baselines")
def stage_baselines(
    params: ParamsOption = Path("params.yaml"),
    haystacks: Annotated[
        Path, typer.Option(help="SummHay haystacks (the summhay stage's output).")
    ] = HAYSTACKS,
    out: Annotated[Path, typer.Option(help="Output folder.")] = DATA_ROOT / "baselines",
) -> None:
    """Reference baselines: retrieval bounds and summarize-then-judge scores per retriever.

    Writes OUT/summhay_contexts.parquet, OUT/summhay_scores.parquet, OUT/summhay.json (DVC
    metrics: coverage bound and mean scores per retriever) and OUT/stats.json.
    """
    from pipelines.stages.baselines import run_baselines

    def run() -> StageStats:
        p = load_params(params)
        return run_baselines(p.resolved_baselines(), p.llm, haystacks, out)

    stats = _guarded(run)
    metrics = json.loads((out / "summhay.json").read_text("utf-8"))
    bounds = ", ".join(f"{k} {v:.0f}" for k, v in metrics["coverage_bound"].items())
    typer.echo(
        f"baselines: {stats.counts['summhay_contexts']} SummHay contexts; coverage bound by "
        f"retriever: {bounds} -> {out}/"
    )


@stage_app.command("lveval")
def stage_lveval(
    params: ParamsOption = Path("params.yaml"),
    entries: EntriesOption = ENTRIES,
    out: Annotated[Path, typer.Option(help="Output folder.")] = DATA_ROOT / "lveval",
) -> None:
    """Build LV-Eval-style sets: QA items at every length level, clean and with CFI and KPR.

    Writes OUT/qa.parquet, OUT/records/<dataset>_<level>.parquet, OUT/leval/*.jsonl (L-Eval's
    layout), OUT/rules.jsonl (proposed replacements, ready for review), OUT/drops.parquet and
    OUT/stats.json.
    """
    from pipelines.stages.lveval import run_lveval

    def run() -> StageStats:
        p = load_params(params)
        return run_lveval(p.lveval, p.llm, entries, out, root=params.resolve().parent)

    stats = _guarded(run)
    c = stats.counts
    levels = ", ".join(k.removeprefix("records_") for k in c if k.startswith("records_"))
    typer.echo(
        f"lveval: {c['qa_items']} QA items x 4 variants at {levels}; "
        f"{sum(stats.dropped.values())} items dropped -> {out}/"
    )


@stage_app.command("lveval-baselines")
def stage_lveval_baselines(
    params: ParamsOption = Path("params.yaml"),
    records: Annotated[
        Path, typer.Option(help="LV-Eval records (the lveval stage's output).")
    ] = DATA_ROOT / "lveval" / "records",
    out: Annotated[Path, typer.Option(help="Output folder.")] = DATA_ROOT / "lveval_baselines",
) -> None:
    """Evidence recall per retriever and AK scores of a generation baseline, per level and variant.

    Writes OUT/retrieval.parquet, OUT/answers.parquet, OUT/lveval.json (DVC metrics),
    OUT/ak_by_level.csv and OUT/recall_by_level.csv (DVC plots) and OUT/stats.json.
    """
    from pipelines.stages.lveval_baselines import run_lveval_baselines

    def run() -> StageStats:
        p = load_params(params)
        return run_lveval_baselines(
            p.resolved_baselines(), p.llm, records, out, embed_cache=p.embed.cache
        )

    stats = _guarded(run)
    metrics = json.loads((out / "lveval.json").read_text("utf-8"))
    typer.echo(
        f"lveval baselines: {stats.counts['records']} records; mean AK "
        f"{metrics.get('ak_mean', 'n/a')} -> {out}/"
    )


@stage_app.command("wikigen-baselines")
def stage_wikigen_baselines(
    params: ParamsOption = Path("params.yaml"),
    entries: EntriesOption = ENTRIES,
    chunks: Annotated[
        Path, typer.Option(help="Document chunks (the chunk stage's output).")
    ] = DATA_ROOT / "chunk" / "chunks.parquet",
    out: Annotated[Path, typer.Option(help="Output folder.")] = DATA_ROOT / "wikigen_baselines",
) -> None:
    """WikiGenBench's RR and PRR baselines: rerank each entry's chunks, write articles with
    citations, and judge every citation.

    Writes OUT/retrieval.parquet, OUT/articles.parquet, OUT/wikigen.json (DVC metrics) and
    OUT/stats.json.
    """
    from pipelines.stages.wikigen_baselines import run_wikigen_baselines

    def run() -> StageStats:
        p = load_params(params)
        return run_wikigen_baselines(
            p.resolved_baselines(), p.llm, entries, chunks, out, embed_cache=p.embed.cache
        )

    stats = _guarded(run)
    metrics = json.loads((out / "wikigen.json").read_text("utf-8"))
    recall = ", ".join(f"{k} {v:.0f}" for k, v in metrics["reference_recall"].items())
    typer.echo(
        f"wikigen baselines: {stats.counts['entries']} entries; reference recall by reranker: "
        f"{recall}; {stats.counts.get('articles_ok', 0)} articles written -> {out}/"
    )


@stage_app.command("chunk")
def stage_chunk(
    params: ParamsOption = Path("params.yaml"),
    documents: DocumentsOption = DOCUMENTS,
    haystacks: Annotated[
        Path, typer.Option(help="SummHay haystacks (the summhay stage's output).")
    ] = HAYSTACKS,
    out: Annotated[Path, typer.Option(help="Output folder.")] = DATA_ROOT / "chunk",
) -> None:
    """Split documents into chunks of words or tokens with character and word offsets.

    Writes OUT/chunks.parquet, OUT/skipped.parquet (documents without text) and OUT/stats.json.
    """
    from pipelines.stages.chunk import run_chunk

    paths = {"web": documents, "summhay": haystacks}
    stats = _guarded(lambda: run_chunk(load_params(params).chunk, paths, out))
    c = stats.counts
    typer.echo(f"chunk: {c['documents']} documents -> {c['chunks']} chunks -> {out}/")


@stage_app.command("embed")
def stage_embed(
    params: ParamsOption = Path("params.yaml"),
    chunks: Annotated[Path, typer.Option(help="Chunks (the chunk stage's output).")] = DATA_ROOT
    / "chunk"
    / "chunks.parquet",
    out: Annotated[Path, typer.Option(help="Output folder.")] = DATA_ROOT / "embed",
) -> None:
    """Embed every chunk (cached by model and text), on CPU, GPUs or a Ray cluster.

    Writes OUT/vectors/embeddings.parquet (chunk id, model, vector), OUT/vectors/index.faiss when
    embed.faiss is on, and OUT/stats.json (cache hits, tokens/s, padding, agreement).
    """
    from pipelines.stages.embed import run_embed

    stats = _guarded(lambda: run_embed(load_params(params).embed, chunks, out))
    c = stats.counts
    typer.echo(
        f"embed: {c['chunks']} chunks, {c['cache_hits']} from the cache, {c['embedded']} "
        f"embedded -> {out}/"
    )


@stage_app.command("publish")
def stage_publish(
    params: ParamsOption = Path("params.yaml"),
    data: Annotated[Path, typer.Option(help="Data folder the stages wrote.")] = DATA_ROOT,
    out: Annotated[Path, typer.Option(help="Export folder.")] = DATA_ROOT / "hub",
) -> None:
    """Export every dataset in publish.datasets in the Hub's layout, with cards; push if asked.

    Writes OUT/<name>/ (Parquet shards per config and split, README.md, images/, eval.yaml,
    benchsmith.json) and OUT/stats.json. With publish.push: true, also pushes and tags each.
    """
    from pipelines.stages.publish import run_publish

    settings = _guarded(lambda: load_params(params).publish)
    stats = _guarded(
        lambda: run_publish(settings, data, out, root=params.resolve().parent, params_file=params)
    )
    rows = ", ".join(
        f"{k.removesuffix('_rows')} {v} rows"
        for k, v in stats.counts.items()
        if k.endswith("_rows")
    )
    typer.echo(f"publish: {rows} -> {out}/ (version {settings.version})")


@app.command("publish")
def publish(
    params: ParamsOption = Path("params.yaml"),
    folder: Annotated[Path, typer.Option(help="Export folder (the publish stage's output).")] = (
        DATA_ROOT / "hub"
    ),
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print every planned operation; no network.")
    ] = False,
    remote_state: Annotated[
        Path | None,
        typer.Option(
            help="JSON of the Hub's refs and tag commits (as its API returns them) to plan "
            "against instead of asking the Hub."
        ),
    ] = None,
) -> None:
    """Push the exported datasets to the Hub, each tagged with publish.version.

    A version that exists with the same content is left alone; one that exists with different
    content is refused. The token comes from HF_TOKEN only.
    """
    from pipelines.publish.hub import RemoteState
    from pipelines.stages.publish import publish_folder

    def run() -> list[str]:
        p = load_params(params)
        remote = None
        if remote_state is not None:
            recorded = json.loads(remote_state.read_text("utf-8"))
            remote = RemoteState.from_responses(recorded.get("refs"), recorded.get("commits", {}))
        return [
            publish_folder(folder / name, p.publish, dry_run=dry_run, remote=remote)
            for name in p.publish.datasets
        ]

    for plan in _guarded(run):
        typer.echo(plan)


@app.command("rehydrate")
def rehydrate(
    folder: Annotated[Path, typer.Argument(help="An export published with documents: urls.")],
    out: Annotated[Path, typer.Option(help="Where the restored documents go.")] = Path(
        "rehydrated"
    ),
    params: ParamsOption = Path("params.yaml"),
) -> None:
    """Re-fetch the documents of a URL-only export and verify each against its content hash.

    Fetching follows sources.fetch (robots.txt, delays, caps, address guard) and extraction
    sources.extract. Writes OUT/documents.parquet (text, rehydrate_status, rehydrate_reason) and
    OUT/rehydrate.json, and lists every page whose content changed or could not be fetched.
    """
    from pipelines.publish.rehydrate import rehydrate as run_rehydrate

    def run():
        p = load_params(params)
        return run_rehydrate(folder, out, p.sources.fetch, p.sources.extract)

    report = _guarded(run)
    typer.echo(f"rehydrate: {report.counts} -> {out}/")
    for url in report.changed:
        typer.echo(f"  changed since publication: {url}")
    for url, reason in report.failed.items():
        typer.echo(f"  not restored: {url} ({reason})")


snapshot_app = typer.Typer(help="Rebuild parts of the embedded snapshot.", no_args_is_help=True)
app.add_typer(snapshot_app, name="snapshot")


@snapshot_app.command("record-web")
def snapshot_record_web(
    params: ParamsOption = Path("params.yaml"),
    web_dir: Annotated[Path, typer.Option(help="Snapshot web folder.")] = Path("snapshot/web"),
) -> None:
    """Re-record the snapshot's WARC archive and search log from its authored pages.

    Serves WEB_DIR/site over HTTPS on 127.0.0.1 under the pages' own host names and runs the live
    fetcher and the search provider interface against it, replacing the archive and search log
    named in params.yaml (sources.archive, sources.search_log).
    """
    from pipelines.snapshot.record import record_web

    summary = _guarded(lambda: record_web(load_params(params), web_dir))
    typer.echo(json.dumps(summary, indent=2, sort_keys=True))


@app.command("report")
def report(data: Annotated[Path, typer.Option(help="Data folder.")] = DATA_ROOT) -> None:
    """Summarise every stage's stats.json and say where the outputs are."""
    if not print_report(data):
        raise _fail(BenchsmithError(f"no stats.json under {data}/; run 'dvc repro' first"))


def print_report(data: Path) -> bool:
    """Print one table per stage from ``data/<stage>/stats.json``; return whether any was found."""
    out = Console()
    found = False
    for stats_file in sorted(data.glob("*/stats.json")):
        found = True
        stats = json.loads(stats_file.read_text("utf-8"))
        table = Table(title=f"stage {stats.get('stage', stats_file.parent.name)}", min_width=40)
        table.add_column("count")
        table.add_column("n", justify="right")
        for key, value in stats.get("counts", {}).items():
            table.add_row(key, str(value))
        for reason, value in stats.get("dropped", {}).items():
            table.add_row(f"  rejected: {reason}", str(value))
        if llm := stats.get("llm"):
            table.add_row(f"llm ({llm['backend']}, {llm['model']})", "")
            for key in ("asks", "calls", "cache_hits", "reasks", "failed"):
                table.add_row(f"  {key}", str(llm[key]))
            table.add_row(
                "  tokens in / out", f"{llm['prompt_tokens']} / {llm['completion_tokens']}"
            )
            table.add_row("  estimated cost (USD)", f"{llm['estimated_cost_usd']:.4f}")
        out.print(table)
        files = ", ".join(
            sorted(p.name for p in stats_file.parent.iterdir() if not p.name.startswith("."))
        )
        out.print(f"outputs in {stats_file.parent}/: {files}\n")
    return found
