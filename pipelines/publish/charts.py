"""PNG charts for the dataset card (matplotlib, no display needed)."""

from __future__ import annotations

import csv
from pathlib import Path

from pipelines.errors import PublishError
from pipelines.publish.export import ExportedConfig
from pipelines.publish.registry import Plot

MAX_SERIES = 8


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def length_chart(configs: list[ExportedConfig], path: Path, title: str) -> bool:
    """Histogram of word lengths, one series per config; False when no config has lengths."""
    series = [(c.name, c.word_lengths) for c in configs if c.word_lengths][:MAX_SERIES]
    if not series:
        return False
    import numpy as np

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
    bins = np.histogram_bin_edges([n for _, lengths in series for n in lengths], bins=40)
    for name, lengths in series:
        ax.hist(lengths, bins=bins, alpha=0.6, label=f"{name} ({len(lengths)})")
    ax.set(title=title, xlabel="words", ylabel="texts")
    _finish(plt, fig, ax, path)
    return True


def line_chart(plot: Plot, data: Path, path: Path) -> bool:
    """Line chart of ``plot.ys`` against ``plot.x`` from a CSV; False when the CSV is absent."""
    source = data / plot.source
    if not source.is_file():
        return False
    with source.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    missing = [c for c in (plot.x, *plot.ys) if rows and c not in rows[0]]
    if missing:
        raise PublishError(f"{source}: chart {plot.title!r} needs column(s) {', '.join(missing)}")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
    xs = [float(r[plot.x]) for r in rows]
    for y in plot.ys:
        ax.plot(xs, [float(r[y]) if r[y] else float("nan") for r in rows], marker="o", label=y)
    ax.set(title=plot.title, xlabel=plot.xlabel, ylabel=plot.ylabel)
    _finish(plt, fig, ax, path)
    return True


def _finish(plt, fig, ax, path: Path) -> None:
    """Legend, layout, then write the PNG and free the figure."""
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
