"""The ``publish`` stage: export every registered dataset in the Hub's layout, then push if asked.

``data/publish/<name>/`` holds ``<config>/<split>-0000i-of-0000N.parquet``, ``README.md`` (card),
``images/*.png``, ``eval.yaml`` where the dataset is a benchmark, ``LICENSE.md`` where its text
comes under several licences, ``benchsmith.json`` and ``croissant.json`` (Croissant 1.1 metadata).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

from builders.releases import Release
from pipelines.publish.dataset import export_dataset
from pipelines.publish.dating import Dating
from pipelines.publish.hub import hub_token, publish_folder
from pipelines.publish.registry import DATASETS
from pipelines.publish.reviews import REVIEWS, DatasetReview, load_reviews, reviews_path
from pipelines.publish.rows import UNASSIGNED
from pipelines.publish.settings import PublishSettings
from pipelines.stage_run import stage_run
from pipelines.stats import StageStats


def run_publish(
    settings: PublishSettings,
    *,
    data: Path,
    out: Path,
    root: Path,
    params_file: Path,
    releases: Sequence[Release] = (),
    reviews: Path | None = None,
) -> StageStats:
    """Export every dataset in ``settings.datasets`` under ``out``; push them when ``push`` is on.

    The token and online mode are checked before anything is written, so a push that cannot
    happen fails at once. The release's reviews, ``<version>.jsonl`` in the folder ``reviews``
    (default: ``root/reviews``), leave rejected items out and correct fields; without that file
    nothing changes.
    """
    if settings.push:
        hub_token()
    releases = list(releases) or [Release(settings.version, date.max)]
    path = reviews_path(root / REVIEWS if reviews is None else reviews, settings.version)
    decisions = load_reviews(path, settings.version)
    with stage_run("publish", out) as run:
        stats = run.stats
        dating = Dating.load(data, releases, only_new=settings.items == "new")
        for name in settings.datasets:
            review = None if decisions is None else DatasetReview.of(decisions, name, path)
            exported = export_dataset(
                DATASETS[name],
                settings,
                data,
                run.scratch / name,
                root,
                params_file,
                dating,
                review=review,
            )
            if review is not None and (rejected := len(review.rejections())):
                stats.update(f"{name}_rejected_in_review", rejected)
            stats.update(f"{name}_configs", len(exported))
            stats.update(f"{name}_rows", sum(c.rows for c in exported))
            unassigned = sum(c.splits[UNASSIGNED].rows for c in exported if UNASSIGNED in c.splits)
            if unassigned:
                stats.update(f"{name}_rows_without_entry", unassigned)
        run.extra |= {"version": settings.version, "documents": settings.documents}
        stats.show(version=settings.version)
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
    return f"publish: {rows} -> {out}/ (version {stats.headline.get('version', '?')})"
