"""The ``publish`` stage: export every registered dataset in the Hub's layout, then push if asked.

``data/publish/<name>/`` holds ``<config>/<split>-0000i-of-0000N.parquet``, ``README.md`` (card),
``images/*.png``, ``eval.yaml`` where the dataset is a benchmark, ``LICENSE.md`` where its text
comes under several licences, ``benchsmith.json`` and ``croissant.json`` (Croissant 1.1 metadata).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from builders.contamination import report_markdown
from builders.releases import Release
from pipelines.errors import MissingInputError
from pipelines.progress import progress_iter
from pipelines.publish import charts
from pipelines.publish.card import (
    CardInputs,
    baseline_json,
    eval_yaml,
    license_text,
    render_card,
)
from pipelines.publish.croissant import CroissantInputs, write_croissant
from pipelines.publish.dating import Dating
from pipelines.publish.export import (
    UNASSIGNED,
    ExportedConfig,
    PublishError,
    config_sources,
    export_config,
    split_index,
)
from pipelines.publish.harness import copy_scorers, write_inspect, write_lm_eval
from pipelines.publish.hub import RemoteState, Retry, hub_token, plan_push, push
from pipelines.publish.manifest import MANIFEST, build_manifest, read_manifest
from pipelines.publish.provenance import collect
from pipelines.publish.registry import CONTAMINATION, DATASETS, LICENSE_FILE, DatasetSpec
from pipelines.publish.release import (
    CHANGELOG,
    RECORD,
    changelog,
    changelog_section,
    flat_metrics,
    previous_changelog,
    previous_record,
    release_record,
    stage_work,
)
from pipelines.publish.settings import PublishSettings
from pipelines.publish.statistics import (
    NAMED,
    length_distributions,
    metric_tables,
    split_counts,
)
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats

log = logging.getLogger("pipelines.publish")
MB = 1_000_000


def export_dataset(
    spec: DatasetSpec,
    settings: PublishSettings,
    data: Path,
    out: Path,
    root: Path,
    params_file: Path,
    dating: Dating | None = None,
) -> list[ExportedConfig]:
    """Write one dataset's folder ``out`` (shards, charts, card, eval.yaml, manifest); with
    ``dating``, every row carries its event's dates and first release."""
    url_only = settings.documents == "urls"
    splits_of = split_index(spec, data)
    exported: list[ExportedConfig] = []
    for config in spec.configs:
        if config.vectors and not settings.embeddings:
            continue
        sources = config_sources(config, data)
        if not sources and not config.optional:
            raise MissingInputError(
                f"missing {data / config.source} (no files for config {config.name!r})",
                data / config.source,
            )
        for name, source, value in progress_iter(sources, f"{spec.name}: {config.name}"):
            exported.append(
                export_config(
                    name,
                    config,
                    source,
                    value,
                    splits_of,
                    data,
                    out,
                    url_only=url_only,
                    shard_bytes=settings.shard_mb * MB,
                    dating=dating,
                )
            )
    stats = [split_counts(exported), length_distributions(exported)]
    stats += [NAMED[name](data) for name in spec.statistics]
    chart_files = []
    if charts.length_chart(
        exported, out / "images" / "lengths.png", f"{spec.pretty_name}: lengths"
    ):
        chart_files.append(("images/lengths.png", "Word-length distribution"))
    for i, plot in enumerate(spec.plots):
        if charts.line_chart(plot, data, out / "images" / f"baseline_{i}.png"):
            chart_files.append((f"images/baseline_{i}.png", plot.title))
    baselines, scores = [], {}
    for path in spec.baselines:
        if (data / path).is_file():
            metrics = baseline_json(data / path)
            baselines += metric_tables(Path(path).stem, metrics)
            scores |= flat_metrics(metrics, f"{Path(path).stem}.")
    contamination = ""
    if spec.contamination and (data / CONTAMINATION).is_file():
        report = json.loads((data / CONTAMINATION).read_text("utf-8"))
        contamination = report_markdown(report) if spec.name in report["probed"] else ""
    changes = ""
    if dating is not None:
        changes = write_release(spec.name, dating, exported, scores, data, root, out)
    inputs = sorted(
        {str(Path("data") / c.source.relative_to(data)) for c in exported}
        | {str(Path("data") / p) for p in spec.baselines if (data / p).is_file()}
        | {
            str(Path("data") / p)
            for name in spec.statistics
            for p in NAMED[name].sources
            if (data / p).is_file()
        }
    )
    provenance = collect(root, params_file, spec.params, inputs)
    copy_scorers(out)
    groups = write_lm_eval(spec, exported, out, settings.version, settings.repo_id(spec.name))
    inspect_tasks = write_inspect(exported, out, settings.version, settings.repo_id(spec.name))
    card = render_card(
        CardInputs(
            spec,
            exported,
            settings.version,
            settings.repo_id(spec.name),
            settings.documents,
            stats,
            baselines,
            chart_files,
            provenance,
            groups,
            inspect_tasks,
            changes,
            contamination,
        ),
        settings.cards,
    )
    card.save(out / "README.md")
    if spec.license_terms:
        (out / LICENSE_FILE).write_text(license_text(spec, settings.version), "utf-8")
    if registration := eval_yaml(spec, exported, settings.version):
        (out / "eval.yaml").write_text(registration, "utf-8")
    manifest = build_manifest(
        out, spec.name, settings.version, provenance.toolkit_version, provenance.git_commit
    )
    (out / MANIFEST).write_text(manifest.to_json(), "utf-8")
    bibs = [settings.cards / "citations" / f"{key}.bib" for key in spec.citations]
    citations = [p.read_text("utf-8").strip() for p in bibs if p.is_file()]
    write_croissant(
        CroissantInputs(
            spec, exported, manifest, settings.repo_id(spec.name), provenance, citations
        ),
        out,
    )
    return exported


def write_release(
    name: str,
    dating: Dating,
    exported: list[ExportedConfig],
    scores: dict[str, float],
    data: Path,
    root: Path,
    out: Path,
) -> str:
    """Write ``release.json`` and ``CHANGELOG.md`` into ``out``; return this release's section
    of the changelog (for the card)."""
    events = {
        k: (e.title, e.created_at.isoformat() if e.created_at else "")
        for k, e in dating.events.items()
    }
    work = {k: v for k, v in stage_work(data).items() if k != "publish"}
    record = release_record(name, dating.releases, events, exported, scores, work)
    (out / RECORD).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", "utf-8")
    old = previous_record(root, dating.releases, name)
    section = changelog_section(old, record)
    previous = previous_changelog(root, dating.releases, name)
    (out / CHANGELOG).write_text(changelog(section, previous), "utf-8")
    return section


def run_publish(
    settings: PublishSettings,
    *,
    data: Path,
    out: Path,
    root: Path,
    params_file: Path,
    releases: Sequence[Release] = (),
) -> StageStats:
    """Export every dataset in ``settings.datasets`` under ``out``; push them when ``push`` is on.

    The token and online mode are checked before anything is written, so a push that cannot
    happen fails at once.
    """
    if settings.push:
        hub_token()
    releases = list(releases) or [Release(settings.version, date.max)]
    with stage_run("publish", out) as run:
        stats = run.stats
        dating = Dating.load(data, releases, only_new=settings.items == "new")
        for name in settings.datasets:
            exported = export_dataset(
                DATASETS[name], settings, data, run.scratch / name, root, params_file, dating
            )
            stats.update(f"{name}_configs", len(exported))
            stats.update(f"{name}_rows", sum(c.rows for c in exported))
            unassigned = sum(c.splits[UNASSIGNED].rows for c in exported if UNASSIGNED in c.splits)
            if unassigned:
                stats.update(f"{name}_rows_without_entry", unassigned)
        run.extra |= {"version": settings.version, "documents": settings.documents}
    if settings.push:
        for name in settings.datasets:
            publish_folder(out / name, settings, dry_run=False)
    return run.stats


def summary(stats: StageStats, out: Path) -> str:
    """One line for the CLI."""
    rows = ", ".join(
        f"{k.removesuffix('_rows')} {v} rows"
        for k, v in stats.counts.items()
        if k.endswith("_rows")
    )
    version = json.loads((out / "stats.json").read_text("utf-8")).get("version", "?")
    return f"publish: {rows} -> {out}/ (version {version})"


def publish_folder(
    folder: Path,
    settings: PublishSettings,
    *,
    dry_run: bool,
    remote: RemoteState | None = None,
) -> str:
    """Plan (``dry_run``) or push one export folder; return the plan as text.

    ``remote`` stands in for the Hub's answers (a recorded state); otherwise a push asks the Hub
    and a dry run asks nothing.
    """
    manifest = read_manifest(folder)
    repo_id = settings.repo_id(manifest.name)
    if repo_id is None:
        raise PublishError(
            f"no Hub repository for {manifest.name}: set publish.namespace (or publish.repos."
            f"{manifest.name}) in params.yaml"
        )
    if manifest.version != settings.version:
        raise PublishError(
            f"{folder} was exported as version {manifest.version}, but publish.version is "
            f"{settings.version}; run 'dvc repro publish' first"
        )
    if dry_run:
        return plan_push(folder, manifest, settings, repo_id, remote).describe()
    token = hub_token()
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    retry = Retry(settings.retries, settings.backoff_s)
    state = remote if remote is not None else RemoteState.fetch(api, repo_id, retry)
    plan = plan_push(folder, manifest, settings, repo_id, state)
    commit = push(plan, folder, manifest, api, retry, settings.private)
    log.info("%s: %s", repo_id, f"tagged {plan.tag} at {commit}" if commit else "already published")
    return plan.describe()
