"""A release's record and its changelog against the previous release.

Every export holds ``release.json``: the release (version, window), its events, every item of
every config by id with its split and a digest of its published row, the baseline scores, and
what each stage did in the run that built its outputs (model asks and cache hits, texts
embedded and taken from the cache, pages replayed and fetched). ``benchsmith refresh`` keeps the
current one under ``releases/<version>/`` before moving the window; the next build compares
against it and writes ``CHANGELOG.md`` (newest release first, earlier entries kept) and a
section of the card.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.releases import Release
from pipelines.publish.dating import Dating
from pipelines.publish.export import ExportedConfig

RECORD = "release.json"
CHANGELOG = "CHANGELOG.md"
RELEASES = "releases"
"""The project folder that keeps earlier releases' records: ``releases/<version>/<dataset>``
``.json`` and ``.CHANGELOG.md``."""
TITLE = (
    "# Changelog\n\nNewest release first. Items are followed by id; `release.json` lists them.\n"
)


def stage_work(data: Path) -> dict[str, dict[str, Any]]:
    """What each stage's last run did, from its ``stats.json``: which run it was, model asks,
    cache hits and calls, texts embedded and from the cache, pages replayed or fetched."""
    work: dict[str, dict[str, Any]] = {}
    for path in sorted(data.glob("*/stats.json")):
        text = path.read_text("utf-8")
        stats = json.loads(text)
        counts = stats.get("counts", {})
        llm = stats.get("llm") or {}
        # a run's stats differ from every other run's (its duration at least)
        row: dict[str, Any] = {"run": hashlib.sha256(text.encode()).hexdigest()[:16]}
        if llm:
            row |= {k: llm.get(k, 0) for k in ("asks", "cache_hits", "calls")}
        if "embedded" in counts:
            row |= {"embedded": counts["embedded"], "embed_cache_hits": counts.get("cache_hits", 0)}
        if "urls_fetched" in counts:
            replayed = stats.get("mode") == "replay"
            row[("pages_replayed" if replayed else "pages_fetched")] = counts["urls_fetched"]
        work[path.parent.name] = row
    return work


def flat_metrics(metrics: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """Every number of a baselines JSON, keyed by its dotted path."""
    out: dict[str, float] = {}
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out |= flat_metrics(value, f"{name}.")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = value
    return out


def release_record(
    name: str,
    releases: list[Release],
    events: Mapping[str, tuple[str, str]],
    configs: list[ExportedConfig],
    baselines: Mapping[str, float],
    work: Mapping[str, Any],
) -> dict[str, Any]:
    """The ``release.json`` of dataset ``name``; ``events`` maps event id -> (title, created)."""
    current = releases[-1]
    return {
        "dataset": name,
        "version": current.version,
        "until": current.until.isoformat(),
        "history": [{"version": r.version, "until": r.until.isoformat()} for r in releases],
        "events": {k: list(v) for k, v in sorted(events.items())},
        "configs": {
            c.name: {k: list(v) for k, v in sorted(c.items.items())} for c in configs if c.spec.ids
        },
        "baselines": dict(sorted(baselines.items())),
        "work": dict(work),
    }


def previous_record(root: Path, releases: list[Release], name: str) -> dict[str, Any] | None:
    """The record of the release before the current one, kept by ``benchsmith refresh``."""
    if len(releases) < 2:
        return None
    path = root / RELEASES / releases[-2].version / f"{name}.json"
    return json.loads(path.read_text("utf-8")) if path.is_file() else None


@dataclass(frozen=True)
class ConfigChange:
    """How one config's items moved between two releases."""

    config: str
    before: int
    after: int
    added: int
    removed: int
    identical: int
    changed: int
    moved: int


def config_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[ConfigChange]:
    """Per config of either record: items added and removed, and of the items kept, how many
    are byte-identical, how many changed, and how many changed split."""
    out = []
    for config in sorted(set(old["configs"]) | set(new["configs"])):
        a, b = old["configs"].get(config, {}), new["configs"].get(config, {})
        kept = a.keys() & b.keys()
        identical = sum(a[k][1] == b[k][1] for k in kept)
        moved = sum(a[k][0] != b[k][0] for k in kept)
        out.append(
            ConfigChange(
                config,
                len(a),
                len(b),
                len(b.keys() - a.keys()),
                len(a.keys() - b.keys()),
                identical,
                len(kept) - identical,
                moved,
            )
        )
    return out


def markdown_table(columns: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table of ``rows`` under ``columns``."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _events(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    added = sorted(new["events"].keys() - old["events"].keys())
    removed = sorted(old["events"].keys() - new["events"].keys())
    lines = [f"**Events:** {len(added)} added, {len(removed)} removed."]
    for label, ids, record in (("added", added, new), ("removed", removed, old)):
        for event in ids:
            title, created = record["events"][event]
            lines.append(f"- {label}: {title} (`{event}`, created {created[:10]})")
    return "\n".join(lines)


def _baselines(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    names = sorted(old["baselines"].keys() | new["baselines"].keys())
    if not names:
        return "No baselines."
    rows = [
        [n, old["baselines"].get(n, "–"), new["baselines"].get(n, "–")]
        for n in names
        if old["baselines"].get(n) != new["baselines"].get(n)
    ]
    same = len(names) - len(rows)
    if not rows:
        return f"All {same} baseline scores unchanged."
    head = f"{len(rows)} of {len(names)} baseline scores changed ({same} unchanged):\n\n"
    return head + markdown_table(["metric", old["version"], new["version"]], rows)


WORK_COLUMNS = (
    ("asks", "model asks"),
    ("cache_hits", "from the cache"),
    ("calls", "model calls"),
    ("embedded", "texts embedded"),
    ("embed_cache_hits", "embeddings from the cache"),
    ("pages_replayed", "pages replayed"),
    ("pages_fetched", "pages fetched"),
)


def _work(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    rows = []
    for stage, row in sorted(new["work"].items()):
        ran = row.get("run") != old.get("work", {}).get(stage, {}).get("run")
        rows.append(
            [stage, "yes" if ran else "no (outputs kept)"]
            + [row.get(key, "") if ran else "" for key, _ in WORK_COLUMNS]
        )
    columns = ["stage", "re-run", *(label for _, label in WORK_COLUMNS)]
    return markdown_table(columns, rows)


def changelog_section(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> str:
    """This release's entry: events, items per config, baselines before and after, and what was
    reused against what was new (the first release lists its items only)."""
    head = f"## {new['version']}\n\nEvents created up to {new['until']}"
    if old is None:
        rows = [[c, len(items)] for c, items in new["configs"].items()]
        return (
            f"{head}; the first release: {len(new['events'])} events.\n\n"
            + markdown_table(["config", "items"], rows)
            + "\n"
        )
    changes = config_changes(old, new)
    rows = [
        [c.config, c.before, c.after, c.added, c.removed, c.identical, c.changed, c.moved]
        for c in changes
    ]
    columns = ["config", "before", "after", "added", "removed", "kept identical",
               "kept but changed", "kept, other split"]  # fmt: skip
    return (
        "\n\n".join(
            (
                f"{head}; the previous release, {old['version']}, covered up to {old['until']}.",
                _events(old, new),
                markdown_table(columns, rows),
                "### Baselines\n\n" + _baselines(old, new),
                "### Work reused and new\n\nEach stage's run that built this release's outputs; "
                "a stage not re-run kept its outputs.\n\n" + _work(old, new),
            )
        )
        + "\n"
    )


def changelog(section: str, previous: str | None) -> str:
    """``CHANGELOG.md``: this release's section above the earlier ones."""
    earlier = previous.removeprefix(TITLE).strip() if previous else ""
    return f"{TITLE}\n{section}" + (f"\n{earlier}\n" if earlier else "")


def previous_changelog(root: Path, releases: list[Release], name: str) -> str | None:
    """The previous release's ``CHANGELOG.md``, kept by ``benchsmith refresh``."""
    if len(releases) < 2:
        return None
    path = root / RELEASES / releases[-2].version / f"{name}.{CHANGELOG}"
    return path.read_text("utf-8") if path.is_file() else None


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
