"""A push planned before anything is sent: what the Hub repository holds (:class:`RemoteState`),
and the operations that publish one export as a tagged version (:class:`PushPlan`), or the
refusal when the version is taken by other content."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.errors import PublishError
from pipelines.publish.manifest import MANIFEST, Manifest, published_files
from pipelines.publish.settings import PublishSettings

TAG_MESSAGE = re.compile(r"benchsmith (?P<version>\S+) content sha256:(?P<hash>[0-9a-f]{64})")


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
    def fetch(
        cls, api: Any, repo_id: str, retry: Callable[[Callable[[], Any]], Any]
    ) -> RemoteState:
        """Ask the Hub through ``huggingface_hub.HfApi``, each call through ``retry`` (a
        :class:`pipelines.publish.hub.Retry`)."""
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
