"""A live web stage killed half way resumes: archived fetches are not repeated, and the result
equals an uninterrupted run's."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from pipelines.settings import load_params
from pipelines.snapshot.site_server import serve_site
from pipelines.snapshot.tls import make_certificates
from pipelines.sources.web.replay import load_index
from pipelines.sources.web.urls import host_of
from pipelines.stages.web import run_web
from pipelines.stages.wiki import run_wiki
from pipelines.stages.wikigen import run_wikigen
from tests.support.snapshot import ROOT

pytestmark = pytest.mark.integration

WEB = ROOT / "snapshot" / "web"
KEPT = ("event_id", "doc_id", "origin", "url", "status", "reason", "http_status", "text")


def _live_params(tmp: Path, port: int, ca: Path, archive: Path) -> Path:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["wiki"]["dump"]["path"] = str(ROOT / data["wiki"]["dump"]["path"])
    data["web"].update(mode="live", archive=str(archive), search_log=str(tmp / "search.jsonl"))
    data["web"]["search"]["providers"] = []  # the search log only
    data["web"]["fetch"].update(
        resolve={"*.example": f"127.0.0.1:{port}"},
        allow_addresses=["127.0.0.1/32"],
        ca_file=str(ca),
        per_host_delay_s=0.05,
        read_timeout_s=2.0,
        total_timeout_s=3.0,
        backoff_s=0.1,
    )
    path = tmp / f"params-{archive.name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _rows(path: Path) -> list[tuple[object, ...]]:
    rows = pq.read_table(path, columns=list(KEPT)).to_pylist()
    return sorted(tuple(r[k] for k in KEPT) for r in rows)


def test_killed_live_run_resumes_without_refetching(tmp_path):
    shutil.copy(WEB / "search.jsonl", tmp_path / "search.jsonl")
    params = load_params(ROOT / "params.yaml")
    run_wiki(params.wiki, out=tmp_path / "wiki")
    articles = tmp_path / "wiki" / "articles.parquet"
    traps = yaml.safe_load((WEB / "traps.yaml").read_text())
    hosts = sorted({host_of(u) for u in load_index(WEB / "archive")})
    ca, cert, key = make_certificates(tmp_path / "tls", hosts)
    with serve_site(WEB / "site", traps, cert, key, WEB / "wayback") as server:
        port = server.server_address[1]
        reference = _live_params(tmp_path, port, ca, tmp_path / "reference")
        run_web(load_params(reference).web, articles=articles, out=tmp_path / "ref-out")

        resumed = _live_params(tmp_path, port, ca, tmp_path / "archive")
        stage = [
            str(Path(sys.executable).parent / "benchsmith"),
            "stage",
            "web",
            "--params",
            str(resumed),
            "--articles",
            str(articles),
            "--out",
            str(tmp_path / "out"),
        ]
        server.requests.clear()
        first = subprocess.Popen(
            stage,
            cwd=tmp_path,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 60 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert first.poll() is None, "the stage ended before it could be killed"
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        assert not (tmp_path / "out" / "documents.parquet").exists()

        archived = set(load_index(tmp_path / "archive"))
        assert len(archived) > 0
        server.requests.clear()
        subprocess.run(stage, cwd=tmp_path, check=True, capture_output=True, timeout=300)
        again = {u for u in server.requests if not u.endswith("/robots.txt")}

    assert not again & archived, sorted(again & archived)[:5]
    assert _rows(tmp_path / "out" / "documents.parquet") == _rows(
        tmp_path / "ref-out" / "documents.parquet"
    )
    entries = []
    for name in ("out", "ref-out"):
        run_wikigen(
            params.wikigen,
            articles=articles,
            documents=tmp_path / name / "documents.parquet",
            out=tmp_path / name / "entries",
        )
        rows = pq.read_table(tmp_path / name / "entries" / "entries.parquet").to_pylist()
        for row in rows:  # fetch times differ between the two runs; nothing else may
            for doc in row["documents"]:
                doc.pop("fetched_at")
        entries.append(rows)
    assert entries[0] == entries[1]
