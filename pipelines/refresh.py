"""``benchsmith refresh``: move the event window forward and build the next release.

It keeps the current release's record and changelog under ``releases/<version>/`` (what the next
build compares against), appends the current release to ``publish.history``, moves
``wiki.created_before`` to the new last day, sets the next calendar version, and runs
``dvc repro``. Items already published keep their ids, splits and bytes: their first release and
their LV-Eval distractor pools follow from the history, which only grows. ``params.yaml`` is
edited in place with its comments kept (ruamel.yaml, which DVC itself uses), and only after the
new settings validate.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from pipelines.errors import BenchsmithError, ParamsError, require_program
from pipelines.publish.release import CHANGELOG, RECORD, RELEASES
from pipelines.settings import load_params

_CALVER = re.compile(r"^(\d{4})\.(\d{1,2})\.(\d+)")


class RefreshError(BenchsmithError):
    """A refresh that cannot start; nothing was changed."""


@dataclass(frozen=True)
class Plan:
    """What a refresh changes."""

    previous: str
    previous_until: date
    version: str
    until: date
    kept: list[Path]


def next_version(current: str, today: date) -> str:
    """The calendar version after ``current``: ``YYYY.M.0`` of ``today``'s month, or the next
    patch when ``current`` is already of that month."""
    match = _CALVER.match(current)
    if match and (int(match[1]), int(match[2])) == (today.year, today.month):
        return f"{today.year}.{today.month}.{int(match[3]) + 1}"
    return f"{today.year}.{today.month}.0"


def _edited(text: str, plan: Plan, items: str | None) -> str:
    """``params.yaml`` with the window, version and history moved, comments kept."""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 100
    doc = yaml.load(text)
    quoted = DoubleQuotedScalarString
    doc["wiki"]["created_before"] = quoted(plan.until.isoformat())
    publish = doc.setdefault("publish", CommentedMap())
    history = publish.get("history") or []
    earlier = CommentedMap(
        [("version", quoted(plan.previous)), ("until", quoted(plan.previous_until.isoformat()))]
    )
    publish["history"] = [*history, earlier]
    publish["version"] = quoted(plan.version)
    if items is not None:
        publish["items"] = items
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def keep_release(root: Path, data: Path, datasets: list[str], version: str) -> list[Path]:
    """Copy every export's ``release.json`` and ``CHANGELOG.md`` to ``releases/<version>/``;
    refuse when an export is missing or holds another release."""
    target = root / RELEASES / version
    pairs = []
    for name in datasets:
        record = data / "publish" / name / RECORD
        if not record.is_file():
            raise RefreshError(
                f"{record} is missing: build the current release ({version}) with `dvc repro` "
                "before refreshing, so the next one can be compared with it"
            )
        built = re.search(r'"version":\s*"([^"]+)"', record.read_text("utf-8"))
        if not built or built[1] != version:
            found = built[1] if built else "no version"
            raise RefreshError(
                f"{record} is release {found}, not {version} (publish.version): run `dvc repro` "
                "to build the current release before refreshing"
            )
        pairs += [(record, target / f"{name}.json")]
        pairs += [(record.with_name(CHANGELOG), target / f"{name}.{CHANGELOG}")]
    target.mkdir(parents=True, exist_ok=True)
    for source, dest in pairs:
        if source.is_file():
            shutil.copyfile(source, dest)
    return [dest for _, dest in pairs if dest.is_file()]


def refresh(
    params_file: Path,
    until: date,
    *,
    version: str | None = None,
    items: Literal["all", "new"] | None = None,
    today: date | None = None,
) -> Plan:
    """Keep the current release's record, then move ``params_file`` to the next release."""
    params = load_params(params_file)
    root = params_file.resolve().parent
    current, last = params.publish.version, params.wiki.created_before
    if until <= last:
        raise RefreshError(
            f"--until {until} does not move the window: wiki.created_before is already {last}"
        )
    new = version or next_version(current, today or datetime.now(UTC).date())
    if new == current or new in {h.version for h in params.publish.history}:
        raise RefreshError(f"version {new} is already taken; pass another with --version")
    plan = Plan(current, last, new, until, [])
    text = _edited(params_file.read_text("utf-8"), plan, items)
    scratch = params_file.with_name(f".{params_file.name}.refresh")
    scratch.write_text(text, "utf-8")
    try:
        load_params(scratch)  # the new settings must validate before anything is kept
    except ParamsError as exc:
        scratch.unlink()
        raise RefreshError(f"the refreshed settings do not validate:\n{exc}") from None
    kept = keep_release(root, root / "data", params.publish.datasets, current)
    os.replace(scratch, params_file)
    return Plan(current, last, new, until, kept)


def repro(root: Path) -> None:
    """Run ``dvc repro`` in ``root`` (output streamed); raise when it fails."""
    dvc = require_program("dvc", "building the release (`dvc repro`)")
    if subprocess.run([dvc, "repro"], cwd=root, check=False).returncode != 0:
        raise RefreshError("dvc repro failed; fix the cause and run `dvc repro` again")
