"""Pushing: the dry-run plan, refusing to re-tag changed content, the token check, retries of
429 against a local stand-in for the Hub's API, and a live push when a token and network exist."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.errors import PublishError
from pipelines.publish.hub import Retry, hub_errors, publish_folder
from pipelines.publish.manifest import read_manifest
from pipelines.publish.push_plan import RemoteState, commit_message, plan_push
from pipelines.snapshot.site_server import in_thread
from pipelines.stages.publish import run_publish
from tests.pipelines.publish.conftest import publish_settings
from tests.support.canary import ARBITRARY, HF, leaks, redacting_logs
from tests.support.http_server import reply
from tests.support.network import no_network
from tests.support.snapshot import ROOT

REPO = "benchsmith-test/lveval"
OTHER = "f" * 64


def refs(*tags: str, branches: tuple[str, ...] = ("main",)) -> dict:
    """A ``GET /api/datasets/<repo>/refs`` answer, as the Hub documents it."""
    return {
        "branches": [
            {"name": b, "ref": f"refs/heads/{b}", "targetCommit": "1" * 40} for b in branches
        ],
        "converts": [],
        "tags": [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": "2" * 40} for t in tags],
    }


def commits(title: str) -> list[dict]:
    """A ``GET /api/datasets/<repo>/commits/<rev>`` answer with one commit."""
    return [
        {
            "id": "2" * 40,
            "title": title,
            "message": "",
            "authors": [{"user": "maintainer", "avatar": ""}],
            "date": "2026-11-20T10:00:00.000Z",
        }
    ]


def recorded(path: Path, tags: dict[str, str]) -> Path:
    """A recorded remote state: refs plus the commit each tag points at."""
    data = {"refs": refs(*tags), "commits": {t: commits(m) for t, m in tags.items()}}
    path.write_text(json.dumps(data))
    return path


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def params_file(tmp_path: Path, **publish: object) -> Path:
    import yaml

    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["publish"].update({"cards": str(ROOT / "cards"), **publish})
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    (tmp_path / "snapshot").symlink_to(ROOT / "snapshot")
    return path


def test_dry_run_lists_every_operation_without_network(hub_export, tmp_path):
    settings = publish_settings(
        tmp_path, namespace="benchsmith-test", revision="next", version="2026.11.0", private=True
    )
    with no_network() as attempts:
        plan = publish_folder(hub_export / "lveval", settings, dry_run=True)
    assert attempts == []
    assert f"repository {REPO} (dataset), revision next, tag 2026.11.0" in plan
    for step in (
        "1. create_repo: benchsmith-test/lveval (private) if missing",
        "2. create_branch: next if missing",
        "3. upload_folder:",
        "4. upload_file: benchsmith.json",
        "5. create_tag: 2026.11.0",
    ):
        assert step in plan
    for path in ("README.md", "eval.yaml", "images/lengths.png", "qa/test-00000-of-00001.parquet"):
        size = (hub_export / "lveval" / path).stat().st_size
        assert f"{path}  {size:,} bytes" in plan


def test_dry_run_from_the_command_line(hub_export, tmp_path):
    params = params_file(tmp_path, namespace="benchsmith-test", datasets=["summhay"])
    code, out = _cli("publish", "--params", str(params), "--folder", str(hub_export), "--dry-run")
    assert code == 0, out
    assert (
        "repository benchsmith-test/summhay" in out
        and "haystacks/test-00000-of-00001.parquet" in out
    )


def plan_lveval_against(hub_export: Path, tmp_path: Path, state: Path) -> tuple[int, str]:
    """``benchsmith publish --dry-run`` of the lveval export against a recorded remote state."""
    params = params_file(tmp_path, namespace="benchsmith-test", datasets=["lveval"])
    return _cli(
        "publish",
        "--params",
        str(params),
        "--folder",
        str(hub_export),
        "--dry-run",
        "--remote-state",
        str(state),
    )


def test_a_used_version_with_other_content_is_refused(hub_export, tmp_path):
    state = recorded(
        tmp_path / "remote.json", {"2026.11.0": f"benchsmith 2026.11.0 content sha256:{OTHER}"}
    )
    code, out = plan_lveval_against(hub_export, tmp_path, state)
    assert code == 1
    assert "version 2026.11.0 is already published with different content" in " ".join(out.split())
    assert "publish.version" in out


def test_identical_content_under_its_version_is_a_noop(hub_export, tmp_path):
    manifest = read_manifest(hub_export / "lveval")
    state = recorded(
        tmp_path / "remote.json",
        {
            "2026.10.0": "benchsmith 2026.10.0 content sha256:" + OTHER,
            "2026.11.0": commit_message(manifest),
        },
    )
    code, out = plan_lveval_against(hub_export, tmp_path, state)
    assert code == 0, out
    assert "nothing to do: tag 2026.11.0 already holds this content" in out


def test_a_new_version_on_an_existing_repository_uploads_and_tags(hub_export, tmp_path):
    manifest = read_manifest(hub_export / "lveval")
    remote = RemoteState.from_responses(refs("2026.10.0"), {"2026.10.0": commits("Upload data")})
    settings = publish_settings(tmp_path, namespace="benchsmith-test", version="2026.11.0")
    plan = plan_push(hub_export / "lveval", manifest, settings, REPO, remote)
    assert [op.action for op in plan.operations] == ["upload_folder", "upload_file", "create_tag"]
    assert remote.tags == {"2026.10.0": None}
    other = publish_settings(tmp_path, namespace="benchsmith-test", version="2026.10.0")
    with pytest.raises(PublishError, match="content not made by benchsmith"):
        plan_push(hub_export / "lveval", manifest, other, REPO, remote)


def test_a_push_without_hf_token_fails_before_any_upload(hub_export, tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    settings = publish_settings(tmp_path, namespace="benchsmith-test")
    with no_network() as attempts, pytest.raises(PublishError, match="HF_TOKEN"):
        publish_folder(hub_export / "lveval", settings, dry_run=False)
    assert attempts == []


@pytest.mark.parametrize(
    ("token", "offline", "message"),
    [(None, False, "HF_TOKEN.*nothing was uploaded"), ("hf_canary", True, "HF_HUB_OFFLINE is set")],
)
def test_a_push_that_cannot_happen_fails_before_the_export_writes(
    publish_data, tmp_path, monkeypatch, token, offline, message
):
    from huggingface_hub import constants

    if token is None:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    else:
        monkeypatch.setenv("HF_TOKEN", token)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline)
    out = tmp_path / "hub"
    with no_network() as attempts, pytest.raises(PublishError, match=message):
        run_publish(
            publish_settings(tmp_path, namespace="x", push=True),
            data=publish_data,
            out=out,
            root=ROOT,
            params_file=ROOT / "params.yaml",
        )
    assert attempts == [] and not out.exists()


def test_a_push_needs_a_repository(hub_export, tmp_path):
    with pytest.raises(PublishError, match=r"publish\.namespace"):
        publish_folder(hub_export / "lveval", publish_settings(tmp_path), dry_run=True)


@contextmanager
def hub_api(answers: dict[str, list[tuple[int, object]]]) -> Iterator[tuple[str, list[str]]]:
    """A stand-in for the Hub's JSON API on 127.0.0.1: each path answers its list in order."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            queue = answers.get(self.path.split("?")[0])
            status, body = queue.pop(0) if queue and len(queue) > 1 else (queue or [(404, {})])[0]
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", "0")
            if status == 404:
                self.send_header("X-Error-Code", "RepoNotFound")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    with in_thread(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen


def test_remote_state_is_read_through_huggingface_hub_and_429_is_retried(hub_export, monkeypatch):
    from huggingface_hub import HfApi, constants

    # make test runs offline (HF_HUB_OFFLINE=1); this stand-in is on 127.0.0.1
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)

    message = commit_message(read_manifest(hub_export / "lveval"))
    answers = {
        f"/api/datasets/{REPO}/refs": [
            (429, {"error": "slow down"}),
            (200, refs("2026.11.0", branches=("main", "next"))),
        ],
        f"/api/datasets/{REPO}/commits/2026.11.0": [(200, commits(message))],
    }
    waits: list[float] = []
    with hub_api(answers) as (endpoint, seen):
        api = HfApi(endpoint=endpoint, token="hf_local_test")
        state = RemoteState.fetch(api, REPO, Retry(retries=3, base_s=0.01, sleep=waits.append))
        missing = RemoteState.fetch(api, "benchsmith-test/absent", Retry(retries=0))
    assert waits == [0.0]
    assert seen[:2] == [f"/api/datasets/{REPO}/refs"] * 2
    assert state.exists and state.branches == {"main", "next"}
    assert state.tags == {"2026.11.0": read_manifest(hub_export / "lveval").content_sha256}
    assert not missing.exists


@contextmanager
def refusing_hub() -> Iterator[tuple[str, list[str]]]:
    """A loopback Hub answering every request 401, quoting the token it was sent in its body
    and headers; yield its URL and the requests it saw."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _refuse(self) -> None:
            seen.append(f"{self.command} {self.path}")
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            sent = self.headers.get("Authorization", "")
            token = sent.removeprefix("Bearer ")
            data = json.dumps({"error": f"Invalid token {token} (sent as {sent})"}).encode()
            echoed = {
                "X-Error-Message": f"Invalid credentials: {token}",
                "WWW-Authenticate": f'Bearer realm="hub", token="{token}"',
            }
            reply(self, 401, data, "application/json", echoed)

        do_GET = do_POST = do_PUT = do_HEAD = _refuse

        def log_message(self, *args: object) -> None:
            pass

    with in_thread(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen


@pytest.mark.parametrize("token", [HF, ARBITRARY], ids=["hf-shaped", "arbitrary"])
def test_a_hub_echoing_the_token_in_a_401_gets_one_redacted_line_from_publish(
    hub_export, tmp_path, monkeypatch, caplog, capfd, token
):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # make sets it; the Hub is local
    monkeypatch.setenv("HF_TOKEN", token)
    params = params_file(tmp_path, namespace="benchsmith-test", datasets=["summhay"])
    caplog.set_level(logging.DEBUG)
    with refusing_hub() as (endpoint, seen), redacting_logs(), no_network(["127.0.0.1"]):
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        monkeypatch.setattr(constants, "ENDPOINT", endpoint)
        code, out = _cli("publish", "--params", str(params), "--folder", str(hub_export))
    assert seen and code == 1
    lines = out.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out, out
    assert lines[0].startswith(
        "error: the Hub refused the token in HF_TOKEN for benchsmith-test/summhay (HTTP 401: "
    )
    assert "REDACTED" in lines[0]
    console = capfd.readouterr()
    texts = [out, console.out, console.err, caplog.text, *(r.getMessage() for r in caplog.records)]
    assert leaks([token], folders=[tmp_path, hub_export], texts=texts) == []


def _online() -> bool:
    try:
        socket.create_connection(("huggingface.co", 443), timeout=3).close()
    except OSError:
        return False
    return True


@pytest.mark.skipif(
    not os.environ.get("HF_TOKEN") or not os.environ.get("BENCHSMITH_TEST_HUB_NAMESPACE"),
    reason="live push needs HF_TOKEN and BENCHSMITH_TEST_HUB_NAMESPACE (a namespace to write to)",
)
def test_live_push_then_repush_is_a_noop(hub_export, tmp_path):
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        pytest.skip("HF_HUB_OFFLINE is set (make test sets it): run pytest outside make")
    if not _online():
        pytest.skip("huggingface.co is not reachable")
    import dataclasses
    import time

    folder = tmp_path / "summhay"
    shutil.copytree(hub_export / "summhay", folder)
    version = f"2026.11.0.dev{int(time.time())}"  # a fresh version on every run
    manifest = dataclasses.replace(read_manifest(folder), version=version)
    (folder / "benchsmith.json").write_text(manifest.to_json())
    settings = publish_settings(
        tmp_path,
        namespace=os.environ["BENCHSMITH_TEST_HUB_NAMESPACE"],
        private=True,
        version=version,
    )
    first = publish_folder(folder, settings, dry_run=False)
    assert "create_tag" in first
    again = publish_folder(folder, settings, dry_run=False)
    assert "nothing to do" in again


def test_a_hub_that_cannot_be_reached_is_one_line_naming_the_repository(monkeypatch):
    from huggingface_hub import HfApi, constants

    from tests.support.process import free_port

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    api = HfApi(endpoint=f"http://127.0.0.1:{free_port()}", token="hf_" + "x" * 30)
    with pytest.raises(PublishError) as failed, hub_errors("benchsmith-test/summhay"):
        api.dataset_info("benchsmith-test/summhay")
    message = str(failed.value)
    assert message.startswith("pushing benchsmith-test/summhay failed: could not reach the Hub (")
    assert message.endswith("; check the network or HF_ENDPOINT") and "\n" not in message
