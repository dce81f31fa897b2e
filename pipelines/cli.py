"""The ``benchsmith`` command: thin typer wrappers over keyword-only stage functions."""

from __future__ import annotations

import inspect
import json
import logging
import sqlite3
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from pipelines import __version__
from pipelines.dag.invoke import Workspace, run_stage, with_hint
from pipelines.dag.spec import DATA, Stage
from pipelines.dag.table import STAGES
from pipelines.display import print_estimate, print_report
from pipelines.errors import (
    BenchsmithError,
    MissingInputError,
    ParamsError,
    describe_cache_error,
    describe_os_error,
    require_program,
)
from pipelines.progress import setup_logging
from pipelines.secrets import redact
from pipelines.settings import load_params

WRITES = "benchsmith.writes"
"""Key of the command context's ``meta`` (shared with the top group): where the command writes."""


class _Guarded(TyperGroup):
    """The top command group: benchsmith's own errors and the machine's (a read-only or full
    disk, too many open files, a missing program) end the command with one redacted line and an
    exit code; ``--verbose`` prints the (redacted) traceback first."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MissingInputError as exc:
            raise _fail(ctx, exc, str(with_hint(exc))) from None
        except BenchsmithError as exc:
            raise _fail(ctx, exc, str(exc)) from None
        except OSError as exc:
            raise _fail(ctx, exc, describe_os_error(exc, ctx.meta.get(WRITES))) from None
        except sqlite3.OperationalError as exc:
            raise _fail(ctx, exc, describe_cache_error(exc)) from None


def _fail(ctx: typer.Context, exc: BaseException, message: str) -> typer.Exit:
    """Print ``message`` (and with ``--verbose`` the traceback of ``exc``), redacted; the exit
    code: 2 for bad settings, 1 otherwise."""
    if ctx.params.get("verbose"):
        console.print(Text(redact("".join(traceback.format_exception(exc)))), soft_wrap=True)
    console.print(Text.assemble(("error: ", "bold red"), redact(message)), soft_wrap=True)
    return typer.Exit(code=2 if isinstance(exc, ParamsError) else 1)


def _writes(ctx: typer.Context, path: Path) -> None:
    """Note where the running command writes, for an error that names no file (a full disk)."""
    ctx.meta[WRITES] = path


app = typer.Typer(
    cls=_Guarded,
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

ParamsOption = Annotated[
    Path, typer.Option("--params", "-p", help="Settings file.", show_default=True)
]


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
    """Validate params.yaml and report the first problems found, naming each key; a wiki dump
    whose language is not wiki.language is one (its siteinfo's xml:lang is read), and so is
    wikigen_baselines.meteor without Java or the METEOR jar (the install command is named)."""
    from pipelines.sources.wiki.reading import check_language

    settings = load_params(params)
    check_language(settings.wiki)
    wikigen = settings.wikigen_baselines
    if wikigen.generate and wikigen.meteor:
        from pipelines.evaluation.meteor import check_meteor

        check_meteor()  # Java and the jar, or the command that installs them
    typer.echo(f"{params}: ok")


def _stage_command(stage: Stage) -> Callable[..., None]:
    """The ``benchsmith stage NAME`` command of one table entry: ``--params``, one option per
    named input (default: where its stage writes it) and ``--out``."""

    def command(ctx: typer.Context, params: Path, out: Path, **inputs: Path) -> None:
        _writes(ctx, out)
        settings = load_params(params)
        stats = run_stage(stage.name, settings, Workspace.of(params), out=out, **inputs)
        typer.echo(stage.summary()(stats, out))

    option = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter("ctx", option, annotation=typer.Context),
        inspect.Parameter("params", option, default=Path("params.yaml"), annotation=ParamsOption),
    ]
    for item in stage.inputs:
        if item.name:
            help_text = f"{item.help} Written by the {item.stage} stage.".strip()
            annotation = Annotated[Path, typer.Option(f"--{item.name}", help=help_text)]
            parameters.append(
                inspect.Parameter(item.name, option, default=item.under(), annotation=annotation)
            )
    out_help = Annotated[Path, typer.Option("--out", help="Output folder.")]
    parameters.append(inspect.Parameter("out", option, default=stage.out, annotation=out_help))
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    writes = ", ".join(f"OUT/{w}" for w in stage.writes())
    command.__doc__ = f"{stage.help}\n\nWrites {writes}. Settings: the '{stage.name}' key."
    command.__name__ = f"stage_{stage.name}"
    return command


for _stage in STAGES.values():
    stage_app.command(_stage.name)(_stage_command(_stage))


@app.command("dag")
def dag(
    write: Annotated[bool, typer.Option("--write", help="Write dvc.yaml.")] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Fail when dvc.yaml differs from the table.")
    ] = False,
    root: Annotated[Path, typer.Option(help="Project folder.")] = Path("."),
) -> None:
    """Print dvc.yaml as the stage table makes it (with --write, write it; with --check, compare).

    Code dependencies are the import closure of each stage's run function.
    """
    from pipelines.dag.dvc_yaml import dvc_yaml

    text = dvc_yaml(root)
    target = root / "dvc.yaml"
    if check:
        current = target.read_text("utf-8") if target.is_file() else ""
        if current != text:
            raise BenchsmithError(
                f"{target} is not what the stage table makes; run 'benchsmith dag --write'"
            )
        typer.echo(f"{target}: up to date")
    elif write:
        target.write_text(text, "utf-8")
        typer.echo(f"wrote {target}")
    else:
        typer.echo(text, nl=False)


@app.command("docs")
def docs(
    write: Annotated[bool, typer.Option("--write", help="Write the generated pages.")] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Fail when a generated page differs from the code.")
    ] = False,
    root: Annotated[Path, typer.Option(help="Project folder.")] = Path("."),
) -> None:
    """Generate the settings reference and the families' file lists in docs/ (with --write,
    write them; with --check, compare; otherwise list the pages that would change)."""
    from pipelines.dag import docs as generated

    if write:
        changed = generated.write(root)
        typer.echo("\n".join(f"wrote {p}" for p in changed) or "docs: up to date")
        return
    stale = generated.stale(root)
    if check and stale:
        names = ", ".join(p.as_posix() for p in stale)
        raise BenchsmithError(f"stale generated docs: {names}; run 'benchsmith docs --write'")
    typer.echo("\n".join(f"stale {p}" for p in stale) or "docs: up to date")


@app.command("publish")
def publish(
    params: ParamsOption = Path("params.yaml"),
    folder: Annotated[Path, typer.Option(help="Export folder (the publish stage's output).")] = (
        STAGES["publish"].out
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
    from pipelines.publish.hub import publish_folder
    from pipelines.publish.push_plan import RemoteState

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

    for plan in run():
        typer.echo(plan)


@app.command("refresh")
def refresh(
    until: Annotated[
        str, typer.Option("--until", help="The new window's last creation day (YYYY-MM-DD).")
    ],
    version: Annotated[
        str | None,
        typer.Option(help="The new release's version (default: the next calendar version)."),
    ] = None,
    items: Annotated[
        str | None,
        typer.Option(help="all: keep earlier items; new: publish only the items this adds."),
    ] = None,
    run: Annotated[
        bool, typer.Option("--repro/--no-repro", help="Run `dvc repro` afterwards.")
    ] = True,
    params: ParamsOption = Path("params.yaml"),
) -> None:
    """Move the event window to UNTIL and build the next release with its changelog.

    Keeps the current release's record under releases/<version>/, appends it to
    publish.history, moves wiki.created_before, sets the next version and runs `dvc repro`.
    Items already published keep their ids, splits and bytes.
    """
    from datetime import date

    from pipelines.refresh import RefreshError, repro
    from pipelines.refresh import refresh as run_refresh

    def plan():
        try:
            day = date.fromisoformat(until)
        except ValueError:
            raise RefreshError(f"--until {until!r} is not a day such as 2026-12-31") from None
        if items not in (None, "all", "new"):
            raise RefreshError(f"--items {items!r}: choose all or new")
        return run_refresh(params, day, version=version, items=items)  # type: ignore[arg-type]

    if run:  # before anything changes
        require_program("dvc", "'benchsmith refresh' (unless --no-repro)")
    done = plan()
    typer.echo(
        f"refresh: {done.previous} (to {done.previous_until}) -> {done.version} (to "
        f"{done.until}); kept {len(done.kept)} files under releases/{done.previous}/"
    )
    if run:
        repro(params.resolve().parent)
        typer.echo(f"refresh: built {done.version}; see data/publish/*/CHANGELOG.md")


@app.command("rehydrate")
def rehydrate(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="An export published with documents: urls.")],
    out: Annotated[Path, typer.Option(help="Where the restored documents go.")] = Path(
        "rehydrated"
    ),
    params: ParamsOption = Path("params.yaml"),
) -> None:
    """Re-fetch the documents of a URL-only export and verify each against its content hash.

    Fetching follows web.fetch (robots.txt, delays, caps, address guard) and extraction
    web.extract. Writes OUT/documents.parquet (text, rehydrate_status, rehydrate_reason) and
    OUT/rehydrate.json, and lists every page whose content changed or could not be fetched.
    """
    from pipelines.publish.rehydrate import rehydrate as run_rehydrate

    def run():
        p = load_params(params)
        return run_rehydrate(folder, out, p.web.fetch, p.web.extract)

    _writes(ctx, out)
    report = run()
    typer.echo(f"rehydrate: {report.counts} -> {out}/")
    for url in report.changed:
        typer.echo(f"  changed since publication: {url}")
    for url, reason in report.failed.items():
        typer.echo(f"  not restored: {url} ({reason})")


@app.command("lveval-official")
def lveval_official(
    ctx: typer.Context,
    records: Annotated[Path, typer.Option(help="The lveval stage's records folder.")] = DATA
    / "lveval"
    / "records",
    out: Annotated[Path, typer.Option(help="Where the layout goes.")] = Path("lveval-official"),
    name: Annotated[
        str | None,
        typer.Option(help="LV-Eval set name (default: multifieldqa_en_mixup / _zh_ by language)."),
    ] = None,
) -> None:
    """Write lveval records in LV-Eval's own layout, OUT/<variant>/<name>_<level>.jsonl, with a
    README.md on running LV-Eval's prediction.py and evaluation.py on it."""
    from builders.lveval.official import write_official

    def run() -> dict[str, int]:
        if not records.is_dir():
            raise MissingInputError(f"missing {records} (the lveval records)", records)
        try:
            return write_official(records, out, name)
        except ValueError as exc:
            raise ParamsError(f"[--name] {exc}") from None

    _writes(ctx, out)
    counts = run()
    typer.echo(f"lveval-official: {sum(counts.values())} lines in {len(counts)} files -> {out}/")


JUDGE_CHECK_HELP = "\n\n".join(
    [
        "Check the configured judge (params.yaml's llm block) against human-labelled verdicts, "
        "to qualify a judge model before trusting its scores.",
        "Every verdict is asked with the prompt, answer model and rule its metric uses. The "
        "report: accuracy and Cohen's kappa over the answered verdicts, per-label precision, "
        "recall, F1 and counts, the confusion matrix (rows human, columns judge), and every "
        "failed judge answer with its reason; for SummHay also linking (judge and human name "
        "the same covering bullet) and the coverage scores' Pearson correlation and bias.",
        "For WikiGenBench's rubric scores (wikigen-rubric) the judges are asked as "
        "wikigen_baselines asks them, once per article and judge call (the labelled dimensions "
        "of one article share them), and the report gives per dimension: n, exact and "
        "within-one agreement, Spearman's rho, quadratic-weighted kappa over the dimension's "
        "whole scale, the mean judge-minus-human bias, and the failed judge answers with their "
        "reasons (left out of the agreement). An undefined figure (rho when one side is "
        "constant) is null, with a note saying why.",
        "FILE is one of two formats, told apart by its first character:",
        "* SummHay's annotations (data/eval_benchmark_data.json of "
        "salesforce/summary-of-a-haystack): a JSON array of annotated summaries, each with "
        '"summkey", "summary" (a list of lines; line i is bullet i+1), "reference_insights" '
        '(a list of {"insight_id", "insight", ...}) and "annotation" (a list of '
        '{"insight_id", "coverage": fully_covered | partially_covered | not_covered, '
        '"candidate_id": the covering line as a 0-based index string, or "no_selection"}); '
        "other keys (topic, subtopic, predictions_*) are not read.",
        "* JSONL, one verdict a line: "
        '{"id"?, "judge": "summhay-coverage", "inputs": {"summary": list of lines or text, '
        '"insight": text}, "label": "full" | "partial" | "none", "bullet_id"?: the covering '
        "line's 1-based number or null} or "
        '{"id"?, "judge": "wikigen-entails", "inputs": {"premise": text, "claim": text}, '
        '"label": true | false} or '
        '{"id"?, "judge": "wikigen-rubric", "inputs": {"title": text, "article": text with '
        '==Heading== lines, "outline"?: list of planned headings}, "dimension": fluency | info '
        '| outline | organization | focus | coverage, "label": the human\'s whole-number score, '
        "0-5 for fluency, info and outline, 1-5 for organization, focus and coverage}.",
        "The judge sees the summary's bullets (or the article) as the metric does. A bad line "
        "or item is an error naming the file, line and key.",
    ]
)


@app.command("judge-check", help=JUDGE_CHECK_HELP)
def judge_check(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(
            help="Human-labelled verdicts or scores: SummHay's annotation JSON or JSONL."
        ),
    ],
    judge: Annotated[
        Literal["summhay-coverage", "wikigen-entails", "wikigen-rubric"] | None,
        typer.Option(help="Judge to check; default: the file's only one."),
    ] = None,
    params: ParamsOption = Path("params.yaml"),
    out: Annotated[Path | None, typer.Option("--out", help="Write the report here (JSON).")] = None,
) -> None:
    """Check the configured judge against human verdicts (help: ``JUDGE_CHECK_HELP``)."""
    from pipelines.evaluation.judge_check import check_file, print_report, write_report

    report = check_file(file, load_params(params).llm, judge)
    print_report(report, Console())
    if out is not None:
        _writes(ctx, out)
        write_report(out, report)
        typer.echo(f"wrote {out}")


@app.command("estimate")
def estimate(
    ctx: typer.Context,
    params: ParamsOption = Path("params.yaml"),
    stage: Annotated[
        list[str] | None,
        typer.Option("--stage", help="Only this model-asking stage (repeatable); default: all."),
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write it here (JSON).")] = None,
) -> None:
    """Count and price what the configured pipeline would ask its model, sending nothing.

    The stages that ask a model run as a dry run into a scratch folder: answers come from the
    response cache where it has them (free) and from stand-ins otherwise. Printed per stage and
    prompt: the calls the cache cannot answer, their prompt tokens (counted with llm.tokenizer,
    or roughly without it), completion tokens (the cached answers' mean, else llm.max_tokens)
    and dollars at llm.input_cost_per_mtok / llm.output_cost_per_mtok. Re-asks cannot be
    foreseen; the last column is the most calls they could add up to.
    """
    from pipelines.dag.estimate import estimate as run_estimate
    from pipelines.outputs import write_json_atomic

    settings = load_params(params)
    try:
        result = run_estimate(settings, Workspace.of(params), stage)
    except ValueError as exc:
        raise BenchsmithError(str(exc)) from None
    print_estimate(result.to_dict(), Console(width=None if console.is_terminal else 150))
    if out is not None:
        _writes(ctx, out)
        write_json_atomic(out, result.to_dict())
        typer.echo(f"wrote {out}")


@app.command("review")
def review(
    dataset: Annotated[
        list[str] | None,
        typer.Option(help="Only this dataset (repeatable): lveval, summhay, wikigenbench."),
    ] = None,
    sample: Annotated[
        int | None, typer.Option(min=1, help="Review a seeded random sample of this many items.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of --sample (the same items every start).")] = 0,
    flagged: Annotated[
        bool, typer.Option("--flagged", help="Only the items the reference panel flagged.")
    ] = False,
    reviewer: Annotated[str, typer.Option(help="Your name, filled in the form.")] = "",
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    folder: Annotated[
        Path, typer.Option(help="The built release (the publish stage's output).")
    ] = (STAGES["publish"].out),
    params: ParamsOption = Path("params.yaml"),
) -> None:
    """Serve a local page to review a built release one item at a time, with its evidence.

    Each decision (accept, or reject with a reason; per field correct or wrong, with a corrected
    value) is appended to reviews/<version>.jsonl beside params.yaml; publish leaves rejected
    items out, applies corrections and reports an Audit in each card. A corrected KPR rule is
    also written to lveval.kpr.rules_file when it is set. Keys: a accept, r reject, e edit, n/p
    next/previous.
    """
    from pipelines.extras import installed

    if not (installed("fastapi") and installed("uvicorn")):
        raise BenchsmithError(
            "'benchsmith review' needs fastapi and uvicorn: pip install 'benchsmith[review]'"
        )
    from pipelines.publish.registry import DATASETS
    from pipelines.publish.reviews import REVIEWS, reviews_path
    from pipelines.review import ReviewSession, load_items, serve

    settings = load_params(params)
    names = dataset or [n for n in DATASETS if n in settings.publish.datasets]
    version, items = load_items(folder, names, sample=sample, seed=seed, only_flagged=flagged)
    if not items:
        raise BenchsmithError(f"no item to review in {folder} ({', '.join(names)})")
    path = reviews_path(Workspace.of(params).root / REVIEWS, version)
    session = ReviewSession(version, items, path, settings.lveval.kpr.rules_file, reviewer)
    typer.echo(
        f"review: {len(items)} items of release {version}; decisions go to {path}\n"
        f"open http://{host}:{port}/ (Ctrl-C stops)"
    )
    serve(session, host, port)


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
    named in params.yaml (web.archive, web.search_log).
    """
    from pipelines.snapshot.record import record_web

    summary = record_web(load_params(params), web_dir)
    typer.echo(json.dumps(summary, indent=2, sort_keys=True))


@snapshot_app.command("scale")
def snapshot_scale(
    factor: Annotated[int, typer.Option(help="How many copies of the snapshot's world (K).")],
    out: Annotated[Path, typer.Option(help="Folder for the grown world.")],
    params: ParamsOption = Path("params.yaml"),
    snapshot: Annotated[Path, typer.Option(help="The snapshot to grow.")] = Path("snapshot"),
    seed: Annotated[int, typer.Option(help="Seed of every name, number, date and order.")] = 0,
    record: Annotated[bool, typer.Option(help="Record the web side for offline replay.")] = True,
) -> None:
    """Grow the snapshot K-fold into OUT: K x its events with their pages, links and search
    answers, recorded for offline replay (docs/scale.md).

    OUT/world.json names the settings that point a build at it (wiki.dump.path, web.archive,
    web.search_log).
    """
    from pipelines.snapshot.world import grow

    summary = grow(snapshot, out, factor, load_params(params), seed=seed, record=record)
    typer.echo(json.dumps(summary, indent=2, sort_keys=True))


@app.command("report")
def report(data: Annotated[Path, typer.Option(help="Data folder.")] = DATA) -> None:
    """Summarise every stage's stats.json and say where the outputs are."""
    if not print_report(data):
        raise BenchsmithError(f"no stats.json under {data}/; run 'dvc repro' first")
