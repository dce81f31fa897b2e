"""One dataset's export folder, in the Hub's layout.

``<config>/<split>-0000i-of-0000N.parquet`` (:mod:`pipelines.publish.export`), ``images/*.png``,
``release.json`` and ``CHANGELOG.md`` when rows are dated, the harness files, ``README.md``
(card), ``LICENSE.md`` where its text comes under several licences, ``eval.yaml`` where the
dataset is a benchmark, ``benchsmith.json`` (manifest) and ``croissant.json``, in that order
(the manifest lists what was written before it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from benchsmith_scoring.tokens import Tokenizer
from builders.contamination import report_markdown
from pipelines.errors import EmptyInputError, MissingInputError
from pipelines.progress import progress_iter
from pipelines.publish import charts
from pipelines.publish.audit import audit_section, rejected_table
from pipelines.publish.card import CardInputs, baseline_json, eval_yaml, license_text, render_card
from pipelines.publish.croissant import CroissantInputs, write_croissant
from pipelines.publish.dating import Dating
from pipelines.publish.export import ExportedConfig, config_sources, export_config, split_index
from pipelines.publish.harness import copy_scorers, write_inspect, write_lm_eval
from pipelines.publish.labels import Labels
from pipelines.publish.manifest import MANIFEST, build_manifest, tokenizer_records
from pipelines.publish.provenance import Provenance, collect
from pipelines.publish.registry import CONTAMINATION, LICENSE_FILE, DatasetSpec
from pipelines.publish.release import flat_metrics, write_release
from pipelines.publish.reviews import DatasetReview
from pipelines.publish.settings import PublishSettings
from pipelines.publish.statistics import (
    NAMED,
    StatTable,
    length_distributions,
    metric_tables,
    split_counts,
    token_lengths,
)
from pipelines.publish.token_counts import COLUMN

MB = 1_000_000


def export_dataset(
    spec: DatasetSpec,
    settings: PublishSettings,
    data: Path,
    out: Path,
    root: Path,
    params_file: Path,
    dating: Dating | None = None,
    review: DatasetReview | None = None,
) -> list[ExportedConfig]:
    """Write one dataset's folder ``out`` (shards, charts, card, eval.yaml, manifest); with
    ``dating``, every row carries its event's dates and first release; with ``review``, items
    people rejected are left out (a drops table) and their corrections applied (the card's
    Audit section)."""
    tokenizers = settings.loaded_tokenizers()
    labels = Labels.load(data) if spec.validated else None
    exported = export_configs(spec, settings, data, out, dating, tokenizers, review, labels)
    if review is not None:
        review.check_items()
    if not any(COLUMN in c.features for c in exported):
        tokenizers = []  # no config of the dataset counts tokens
    stats = [split_counts(exported), length_distributions(exported)]
    stats += [NAMED[name](data) for name in spec.statistics]
    stats += [rejected_table(review)] if review is not None else []
    chart_files = write_charts(spec, exported, data, out)
    baselines, scores = baseline_scores(spec, data)
    contamination = contamination_section(spec, data)
    validation = labels.card_section(spec.name, data) if labels is not None else ""
    changes = ""
    if dating is not None:
        changes = write_release(spec.name, dating, exported, scores, data, root, out)
    provenance = collect(root, params_file, spec.params, read_inputs(spec, exported, data))
    copy_scorers(out)
    repo_id = settings.repo_id(spec.name)
    groups = write_lm_eval(spec, exported, out, settings.version, repo_id)
    inspect_tasks = write_inspect(exported, out, settings.version, repo_id)
    card = CardInputs(
        spec=spec,
        configs=exported,
        version=settings.version,
        repo_id=repo_id,
        documents=settings.documents,
        statistics=stats,
        baselines=baselines,
        charts=chart_files,
        provenance=provenance,
        lm_eval_groups=groups,
        inspect_tasks=inspect_tasks,
        changes=changes,
        contamination=contamination,
        tokenizers=tokenizers,
        token_table=token_lengths(exported, [t.name for t in tokenizers]),
        audit=audit_section(review) if review is not None else "",
        validation=validation,
    )
    render_card(card, settings.cards).save(out / "README.md")
    write_metadata(spec, settings, exported, out, provenance, tokenizers)
    return exported


def export_configs(
    spec: DatasetSpec,
    settings: PublishSettings,
    data: Path,
    out: Path,
    dating: Dating | None,
    tokenizers: Sequence[Tokenizer] = (),
    review: DatasetReview | None = None,
    labels: Labels | None = None,
) -> list[ExportedConfig]:
    """Every config of ``spec`` (vector configs only with ``embeddings``) as shards under
    ``out``, with the counts of ``tokenizers`` where a config declares a ``tokens`` column and
    ``review``'s decisions on the configs whose items it names; a config without source files
    is an error unless it is optional."""
    splits_of = split_index(spec, data)
    exported: list[ExportedConfig] = []
    for config in spec.configs:
        if config.vectors and not settings.embeddings:
            continue
        sources = config_sources(config, data)
        if not sources and not config.optional:
            raise _no_sources(config.source, config.name, data)
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
                    url_only=settings.documents == "urls",
                    shard_bytes=settings.shard_mb * MB,
                    dating=dating,
                    tokenizers=tokenizers,
                    review=review.for_config(name, config) if review is not None else None,
                    labels=labels.for_config(spec.name, name, config) if labels else None,
                )
            )
    return exported


def _no_sources(source: str, config: str, data: Path) -> MissingInputError:
    """The error for a config that found nothing: its files are missing, or their folder is
    there but holds no file or no row (the stage that writes them ran and produced none)."""
    path = data / source
    if "*" not in source or not path.parent.is_dir():
        return MissingInputError(f"missing {path} (no files for config {config!r})", path)
    stats = data / Path(source).parts[0] / "stats.json"
    why = f"; its {stats} says what it kept and left out" if stats.is_file() else ""
    return EmptyInputError(f"no rows for config {config!r} in {path}", path, why)


def write_charts(
    spec: DatasetSpec, exported: list[ExportedConfig], data: Path, out: Path
) -> list[tuple[str, str]]:
    """The length chart and the baseline plots under ``out/images/``: ``(file, caption)`` of
    each one drawn."""
    chart_files = []
    if charts.length_chart(
        exported, out / "images" / "lengths.png", f"{spec.pretty_name}: lengths"
    ):
        chart_files.append(("images/lengths.png", "Word-length distribution"))
    for i, plot in enumerate(spec.plots):
        if charts.line_chart(plot, data, out / "images" / f"baseline_{i}.png"):
            chart_files.append((f"images/baseline_{i}.png", plot.title))
    return chart_files


def baseline_scores(spec: DatasetSpec, data: Path) -> tuple[list[StatTable], dict[str, float]]:
    """The card's tables of the baselines' metrics files that exist, and every score in them
    by dotted key (``<file stem>.<path>``, for the release record)."""
    baselines: list[StatTable] = []
    scores: dict[str, float] = {}
    for path in spec.baselines:
        if (data / path).is_file():
            metrics = baseline_json(data / path)
            baselines += metric_tables(Path(path).stem, metrics)
            scores |= flat_metrics(metrics, f"{Path(path).stem}.")
    return baselines, scores


def contamination_section(spec: DatasetSpec, data: Path) -> str:
    """The card's contamination section, when the dataset was probed (else empty)."""
    if not spec.contamination or not (data / CONTAMINATION).is_file():
        return ""
    report = json.loads((data / CONTAMINATION).read_text("utf-8"))
    return report_markdown(report) if spec.name in report["probed"] else ""


def read_inputs(spec: DatasetSpec, exported: list[ExportedConfig], data: Path) -> list[str]:
    """The stage outputs the folder was made from, as ``data/...`` paths, sorted."""
    return sorted(
        {str(Path("data") / c.source.relative_to(data)) for c in exported}
        | {str(Path("data") / p) for p in spec.baselines if (data / p).is_file()}
        | {
            str(Path("data") / p)
            for name in spec.statistics
            for p in NAMED[name].sources
            if (data / p).is_file()
        }
    )


def write_metadata(
    spec: DatasetSpec,
    settings: PublishSettings,
    exported: list[ExportedConfig],
    out: Path,
    provenance: Provenance,
    tokenizers: Sequence[Tokenizer] = (),
) -> None:
    """``LICENSE.md`` and ``eval.yaml`` where they apply, then the manifest of the folder (with
    the tokenizers its ``tokens`` columns count in) and its Croissant metadata."""
    if spec.license_terms:
        (out / LICENSE_FILE).write_text(license_text(spec, settings.version), "utf-8")
    if registration := eval_yaml(spec, exported, settings.version):
        (out / "eval.yaml").write_text(registration, "utf-8")
    manifest = build_manifest(
        out,
        spec.name,
        settings.version,
        provenance.toolkit_version,
        provenance.git_commit,
        tokenizer_records(settings.tokenizers, tokenizers),
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
