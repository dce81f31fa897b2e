"""Where a published dataset came from: toolkit and git version, dvc.lock hashes, params, seeds."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pipelines import __version__
from pipelines.embed.settings import EmbedSettings
from pipelines.secrets import redact_value


@dataclass(frozen=True)
class Provenance:
    """Everything the card's provenance section reports."""

    toolkit_version: str
    git_commit: str
    git_dirty: bool
    input_hashes: dict[str, str]
    params: dict[str, Any]
    seeds: dict[str, Any]
    snapshot: str
    event_window: str
    llm: str
    encoders: dict[str, str] = field(default_factory=dict)


def git_state(root: Path) -> tuple[str, bool]:
    """HEAD's commit and whether tracked files differ from it ("unknown" outside git)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown", False
    return head, bool(status.strip())


def lock_hashes(root: Path, inputs: list[str]) -> dict[str, str]:
    """The dvc.lock md5 of every input (a path, or a file inside a tracked folder)."""
    lock = root / "dvc.lock"
    if not lock.is_file():
        return {}
    outs: dict[str, str] = {}
    for stage in (yaml.safe_load(lock.read_text("utf-8")) or {}).get("stages", {}).values():
        for out in stage.get("outs", []):
            outs[out["path"]] = out.get("md5", "")
    found = {}
    for path in inputs:
        for out, md5 in outs.items():
            if path == out or path.startswith(out.rstrip("/") + "/"):
                found[out] = md5
    return dict(sorted(found.items()))


def redact(value: Any) -> Any:
    """Params with credentials (user info in URLs, key-like query parameters, any key's value)
    redacted by :func:`pipelines.secrets.redact_value`; keys themselves never live in
    params.yaml."""
    return redact_value(value)


def seeds_of(params: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Every ``seed`` setting, by its dotted key."""
    found: dict[str, Any] = {}
    for key, value in params.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            found.update(seeds_of(value, name))
        elif key == "seed":
            found[name] = value
    return found


def encoders_of(params: dict[str, Any]) -> dict[str, str]:
    """The encoders a card names: the embed stage's, and the dense baseline's as
    ``Params.resolved_retrieval`` settles it (the embed stage's unless one is named)."""
    embed = str((params.get("embed") or {}).get("model") or EmbedSettings().model)
    dense = (params.get("retrieval") or {}).get("dense_model") or embed
    return {"embed.model": embed, "retrieval.dense_model": str(dense)}


def collect(root: Path, params_file: Path, keys: tuple[str, ...], inputs: list[str]) -> Provenance:
    """Provenance of a dataset built from ``inputs`` (paths as dvc.yaml names them)."""
    raw = redact(yaml.safe_load(params_file.read_text("utf-8")) or {})
    used = {k: raw[k] for k in keys if k in raw}
    wiki, llm = raw.get("wiki", {}), raw.get("llm", {})
    if wiki.get("reader", "dump") == "dump":
        snapshot = f"wiki dump read at {wiki.get('dump', {}).get('snapshot_at', 'unknown')}"
    else:
        snapshot = f"live MediaWiki API ({wiki.get('api', {}).get('url', '')})"
    mode = raw.get("web", {}).get("mode", "replay")
    snapshot += f"; web documents: {mode}"
    backend = llm.get("backend", "template")
    llm_text = (
        "template (offline, no model)"
        if backend == "template"
        else (f"{backend}: {llm.get('model', '')}")
    )
    commit, dirty = git_state(root)
    return Provenance(
        toolkit_version=__version__,
        git_commit=commit,
        git_dirty=dirty,
        input_hashes=lock_hashes(root, inputs),
        params=used,
        seeds=seeds_of(used),
        snapshot=snapshot,
        event_window=f"{wiki.get('created_after', '?')} to {wiki.get('created_before', '?')}",
        llm=llm_text,
        encoders=encoders_of(raw),
    )
