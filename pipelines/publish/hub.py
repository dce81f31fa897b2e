"""Pushing an export to the Hub as a tagged version: plan, refuse, retry, upload, tag.

A version is a tag whose commit message carries the export's content hash, so a later push
can tell "same content again" (a no-op) from "different content under a used version"
(refused) by reading the tag's commit, with no file download. :func:`publish_folder` checks an
export folder against the settings and plans or pushes it.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pipelines.errors import PublishError
from pipelines.publish.manifest import MANIFEST, Manifest, published_files, read_manifest
from pipelines.publish.settings import PublishSettings
from pipelines.retry import RetryPolicy, retry_after_s

log = logging.getLogger("pipelines.publish")
T = TypeVar("T")
TOKEN_ENV = "HF_TOKEN"
TAG_MESSAGE = re.compile(r"benchsmith (?P<version>\S+) content sha256:(?P<hash>[0-9a-f]{64})")
RETRY_STATUS = {408, 429, 500, 502, 503, 504}


def commit_message(manifest: Manifest) -> str:
    """The message of the commit a version's tag points at."""
    return f"benchsmith {manifest.version} content sha256:{manifest.content_sha256}"


@dataclass(frozen=True)
class RemoteState:
    """What the Hub repository already holds: whether it exists, its branches and version tags.

    ``tags`` maps a tag to the content hash in its commit's message (None when the tag was not
    made by benchsmith).
    """

    exists: bool
    branches: frozenset[str] = frozenset()
    tags: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def from_responses(
        cls, refs: dict[str, Any] | None, commits: dict[str, list[dict[str, Any]]]
    ) -> RemoteState:
        """Build from the Hub API's JSON: ``GET /api/datasets/<repo>/refs`` (None: no such
        repository) and ``GET /api/datasets/<repo>/commits/<tag>`` for each tag."""
        if refs is None:
            return cls(exists=False)
        tags: dict[str, str | None] = {}
        for tag in refs.get("tags", []):
            history = commits.get(tag["name"]) or [{}]
            tags[tag["name"]] = _content_hash(history[0].get("message") or history[0].get("title"))
        return cls(True, frozenset(b["name"] for b in refs.get("branches", [])), tags)

    @classmethod
    def fetch(cls, api: Any, repo_id: str, retry: Retry) -> RemoteState:
        """Ask the Hub through ``huggingface_hub.HfApi``."""
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            refs = retry(lambda: api.list_repo_refs(repo_id, repo_type="dataset"))
        except RepositoryNotFoundError:
            return cls(exists=False)
        tags: dict[str, str | None] = {}
        for tag in refs.tags:
            history = retry(
                lambda t=tag: api.list_repo_commits(repo_id, repo_type="dataset", revision=t.name)
            )
            tags[tag.name] = (
                _content_hash(history[0].message or history[0].title) if history else None
            )
        return cls(True, frozenset(b.name for b in refs.branches), tags)


def _content_hash(message: str | None) -> str | None:
    match = TAG_MESSAGE.search(message or "")
    return match.group("hash") if match else None


@dataclass(frozen=True)
class Operation:
    """One planned Hub call."""

    action: str
    detail: str


@dataclass(frozen=True)
class PushPlan:
    """Every operation a push will make, or an empty list when the version is already there."""

    repo_id: str
    revision: str
    tag: str
    content_sha256: str
    files: list[tuple[str, int]]
    operations: list[Operation]

    @property
    def noop(self) -> bool:
        """The same content is already published under this version."""
        return not self.operations

    def describe(self) -> str:
        """Human-readable plan: repository, revision, tag, then each operation and file."""
        head = (
            f"repository {self.repo_id} (dataset), revision {self.revision}, tag {self.tag}, "
            f"content sha256:{self.content_sha256[:16]}"
        )
        if self.noop:
            return f"{head}\n  nothing to do: tag {self.tag} already holds this content"
        lines = [
            head,
            *(f"  {i}. {op.action}: {op.detail}" for i, op in enumerate(self.operations, 1)),
        ]
        lines += [f"       {path}  {size:,} bytes" for path, size in self.files]
        return "\n".join(lines)


def plan_push(
    folder: Path,
    manifest: Manifest,
    settings: PublishSettings,
    repo_id: str,
    remote: RemoteState | None,
) -> PushPlan:
    """Plan the push of ``folder``; ``remote=None`` plans without asking the Hub (dry run).

    Raises PublishError when the version's tag already exists with other content.
    """
    tag = settings.version
    files = [(str(p.relative_to(folder)), p.stat().st_size) for p in published_files(folder)]
    ops: list[Operation] = []
    if remote is not None and tag in remote.tags:
        if remote.tags[tag] == manifest.content_sha256:
            return PushPlan(repo_id, settings.revision, tag, manifest.content_sha256, files, ops)
        held = (
            f"sha256:{remote.tags[tag]}" if remote.tags[tag] else "content not made by benchsmith"
        )
        raise PublishError(
            f"{repo_id}: version {tag} is already published with different content ({held}; "
            f"this build: sha256:{manifest.content_sha256}). A version is never re-tagged: set "
            "a new publish.version (e.g. the next patch number) and publish again."
        )
    if remote is None or not remote.exists:
        ops.append(
            Operation(
                "create_repo",
                f"{repo_id} ({'private' if settings.private else 'public'})"
                + (" if missing" if remote is None else ""),
            )
        )
    if settings.revision != "main" and (remote is None or settings.revision not in remote.branches):
        ops.append(
            Operation(
                "create_branch", f"{settings.revision}" + (" if missing" if remote is None else "")
            )
        )
    data = [(p, s) for p, s in files if p != MANIFEST]
    ops.append(
        Operation(
            "upload_folder",
            f"{len(data)} files, {sum(s for _, s in data):,} bytes to {settings.revision} "
            "(resumable, in several commits when large)",
        )
    )
    ops.append(Operation("upload_file", f"{MANIFEST} with message '{commit_message(manifest)}'"))
    ops.append(Operation("create_tag", f"{tag} on that commit"))
    return PushPlan(repo_id, settings.revision, tag, manifest.content_sha256, files, ops)


def hub_token() -> str:
    """The Hub token, from HF_TOKEN only, and the Hub reachable by huggingface_hub (not in
    offline mode); a clear error before any network or any write otherwise."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise PublishError(
            f"pushing needs a Hub token in the {TOKEN_ENV} environment variable (a write token "
            "from https://huggingface.co/settings/tokens); nothing was uploaded"
        )
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        raise PublishError(
            "pushing needs the Hub, but HF_HUB_OFFLINE is set (make sets it for repro and test): "
            "push with 'benchsmith publish' or 'dvc repro publish' outside make; nothing was "
            "uploaded"
        )
    return token


@dataclass
class Retry:
    """Call a Hub function, retrying 429, 408 and 5xx answers and network errors with backoff."""

    retries: int = 5
    base_s: float = 2.0
    sleep: Callable[[float], None] = time.sleep
    waits: list[float] = field(default_factory=list)

    def __call__(self, call: Callable[[], T]) -> T:
        from huggingface_hub.errors import HfHubHTTPError

        policy = RetryPolicy(self.retries, self.base_s, max_retry_after_s=float("inf"))
        attempt = 0
        while True:
            try:
                return call()
            except HfHubHTTPError as exc:
                status = exc.response.status_code if exc.response is not None else None
                if status not in RETRY_STATUS or policy.exhausted(attempt):
                    raise
                wait = policy.wait_s(
                    attempt, retry_after_s(exc.response.headers.get("Retry-After"))
                )
            except OSError:
                if policy.exhausted(attempt):
                    raise
                wait = policy.wait_s(attempt)
            assert wait is not None  # never exhausted here, and no wait is too long for the Hub
            self.waits.append(wait)
            log.info("Hub answered busy or failed; retrying in %.1f s", wait)
            self.sleep(wait)
            attempt += 1


def push(
    plan: PushPlan, folder: Path, manifest: Manifest, api: Any, retry: Retry, private: bool
) -> str:
    """Carry out ``plan`` with ``api`` (an ``HfApi``); return the tagged commit (or "" if no-op)."""
    if plan.noop:
        return ""
    actions = {op.action for op in plan.operations}
    if "create_repo" in actions:
        retry(
            lambda: api.create_repo(
                plan.repo_id, repo_type="dataset", private=private, exist_ok=True
            )
        )
    if "create_branch" in actions:
        retry(
            lambda: api.create_branch(
                plan.repo_id, branch=plan.revision, repo_type="dataset", exist_ok=True
            )
        )
    retry(
        lambda: api.upload_folder(
            repo_id=plan.repo_id,
            folder_path=folder,
            repo_type="dataset",
            revision=plan.revision,
            commit_message=f"benchsmith {plan.tag}: data and card",
            ignore_patterns=[MANIFEST, ".*", "**/.*"],
        )
    )
    info = retry(
        lambda: api.upload_file(
            path_or_fileobj=manifest.to_json().encode(),
            path_in_repo=MANIFEST,
            repo_id=plan.repo_id,
            repo_type="dataset",
            revision=plan.revision,
            commit_message=commit_message(manifest),
        )
    )
    retry(
        lambda: api.create_tag(
            plan.repo_id,
            tag=plan.tag,
            revision=info.oid,
            tag_message=commit_message(manifest),
            repo_type="dataset",
        )
    )
    return info.oid


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
