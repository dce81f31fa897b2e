"""Pushing an export to the Hub as a tagged version: plan (:mod:`pipelines.publish.push_plan`),
refuse, retry, upload, tag.

A version is a tag whose commit message carries the export's content hash, so a later push
can tell "same content again" (a no-op) from "different content under a used version"
(refused) by reading the tag's commit, with no file download. :func:`publish_folder` checks an
export folder against the settings and plans or pushes it; what ``huggingface_hub`` raises on
the way becomes a one-line, redacted :class:`PublishError` (:func:`hub_errors`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pipelines.errors import PublishError
from pipelines.publish.manifest import MANIFEST, Manifest, read_manifest
from pipelines.publish.push_plan import PushPlan, RemoteState, commit_message, plan_push
from pipelines.publish.settings import PublishSettings
from pipelines.retry import RetryPolicy, retry_after_s
from pipelines.secrets import redact

log = logging.getLogger("pipelines.publish")
T = TypeVar("T")
TOKEN_ENV = "HF_TOKEN"
RETRY_STATUS = {408, 429, 500, 502, 503, 504}
MESSAGE_CHARS = 200
"""How much of the Hub's own message a PublishError quotes (its first line)."""


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


def _first_line(text: str) -> str:
    """The first non-empty line of ``text``, redacted before it is cut to
    :data:`MESSAGE_CHARS` (a token cut in two would no longer be recognised)."""
    lines = [line.strip() for line in redact(text).splitlines() if line.strip()]
    return lines[0][:MESSAGE_CHARS] if lines else ""


HTTP_CLIENTS = {"httpx", "httpx2", "httpcore", "requests", "urllib3"}
"""Packages whose transport errors (refused, reset, timed out) ``huggingface_hub`` lets through:
which one depends on its version (2.x uses ``httpx2``), so they are matched by module."""


@contextmanager
def hub_errors(repo_id: str) -> Iterator[None]:
    """Turn what ``huggingface_hub`` raises inside the block (an HTTP error after the retries,
    a network failure) into a one-line :class:`PublishError` naming ``repo_id``, with the
    Hub's message redacted (a server may echo the token) and no traceback."""
    from huggingface_hub.errors import HfHubHTTPError

    try:
        yield
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        said = _first_line(exc.server_message or "") or _first_line(str(exc))
        if status in (401, 403):
            raise PublishError(
                f"the Hub refused the token in {TOKEN_ENV} for {repo_id} (HTTP {status}: "
                f"{said}); use a write token for that namespace"
            ) from None
        raise PublishError(f"pushing {repo_id} failed: HTTP {status}: {said}") from None
    except OSError as exc:
        raise PublishError(
            f"pushing {repo_id} failed: {type(exc).__name__}: {_first_line(str(exc))}"
        ) from None
    except Exception as exc:
        if type(exc).__module__.split(".")[0] not in HTTP_CLIENTS:
            raise
        raise PublishError(
            f"pushing {repo_id} failed: could not reach the Hub ({type(exc).__name__}: "
            f"{_first_line(str(exc))}); check the network or HF_ENDPOINT"
        ) from None


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
    with hub_errors(repo_id):
        state = remote if remote is not None else RemoteState.fetch(api, repo_id, retry)
        plan = plan_push(folder, manifest, settings, repo_id, state)
        commit = push(plan, folder, manifest, api, retry, settings.private)
    log.info("%s: %s", repo_id, f"tagged {plan.tag} at {commit}" if commit else "already published")
    return plan.describe()
