"""URL-only publishing: rehydrate restores the same text from a local site and flags a page
whose content changed since it was fetched."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import load_dataset
from typer.testing import CliRunner

from builders.wikigen.documents import content_hash
from pipelines.cli import app
from pipelines.publish.export import export_config
from pipelines.publish.registry import DATASETS
from pipelines.publish.rehydrate import rehydrate
from pipelines.snapshot.site_server import in_thread
from pipelines.sources.web.extract import ExtractSettings, extract_one
from pipelines.sources.web.settings import FetchSettings
from tests.support.snapshot import ROOT

STORY = (
    "<html lang='en'><head><title>{title}</title></head><body><article><h1>{title}</h1>"
    + "".join(
        f"<p>Paragraph {i} of the report on the {{title}} says the river rose {i} metres overnight "
        "and the town council opened two shelters near the old mill for families.</p>"
        for i in range(8)
    )
    + "</article></body></html>"
)


def site(pages: dict[str, str]):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path)
            data = (body or "not found").encode()
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return in_thread(ThreadingHTTPServer(("127.0.0.1", 0), Handler))


def test_rehydrate_restores_text_and_flags_a_changed_page(tmp_path):
    pages = {f"/news/{n}": STORY.format(title=f"Meridal flood {n}") for n in ("a", "b", "c")}
    fetch = FetchSettings(
        contact="ops@benchsmith.example", per_host_delay_s=0, allow_addresses=["127.0.0.1/32"]
    )
    extract = ExtractSettings()
    with site(pages) as server:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        rows = []
        for i, n in enumerate(("a", "b", "c", "gone")):
            url = f"{base}/news/{n}"
            text = (
                extract_one(f"d{i}", pages[f"/news/{n}"], url, extract).text if n != "gone" else ""
            )
            rows.append(
                {
                    "event_id": "e1",
                    "doc_id": f"d{i}",
                    "origin": "human",
                    "url": url,
                    "status": "ok" if text else "dead",
                    "text": text,
                    "content_hash": content_hash(text) if text else "",
                    "fetched_at": datetime(2026, 11, 20, tzinfo=UTC),
                }
            )
        rows.append({**rows[0], "doc_id": "d9", "url": f"{base}/news/removed"})
        data = tmp_path / "data"
        (data / "web").mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows), data / "web" / "documents.parquet")
        spec = next(c for c in DATASETS["wikigenbench"].configs if c.name == "documents")
        export = tmp_path / "export"
        export_config(
            "documents",
            spec,
            data / "web/documents.parquet",
            None,
            {"e1": "test"},
            data,
            export,
            url_only=True,
            shard_bytes=10**9,
        )
        assert (
            "text"
            not in load_dataset(
                "parquet", data_files=str(export / "documents/*.parquet"), split="train"
            ).column_names
        )
        pages["/news/b"] = pages["/news/b"].replace("two shelters", "three shelters")
        report = rehydrate(export, tmp_path / "out", fetch, extract)
    restored = {
        r["doc_id"]: r for r in pq.read_table(tmp_path / "out/documents.parquet").to_pylist()
    }
    assert report.counts == {"changed": 1, "dead": 1, "not_published": 1, "restored": 2}
    assert (
        restored["d0"]["text"] == rows[0]["text"]
        and restored["d0"]["rehydrate_status"] == "restored"
    )
    assert restored["d2"]["text"] == rows[2]["text"]
    assert (
        restored["d1"]["rehydrate_status"] == "changed"
        and "three shelters" in restored["d1"]["text"]
    )
    assert "differs from the published" in restored["d1"]["rehydrate_reason"]
    assert report.changed == [f"{base}/news/b"]
    assert restored["d3"]["rehydrate_status"] == "not_published"
    assert restored["d9"]["rehydrate_status"] == "dead" and f"{base}/news/removed" in report.failed
    assert json.loads((tmp_path / "out/rehydrate.json").read_text())["counts"] == report.counts


def test_rehydrate_refuses_loopback_unless_allowed(tmp_path):
    pages = {"/news/a": STORY.format(title="Meridal flood a")}
    with site(pages) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/news/a"
        text = extract_one("d0", pages["/news/a"], url, ExtractSettings()).text
        export = tmp_path / "export" / "documents"
        export.mkdir(parents=True)
        pq.write_table(
            pa.Table.from_pylist(
                [{"doc_id": "d0", "url": url, "content_hash": content_hash(text)}]
            ),
            export / "test-00000-of-00001.parquet",
        )
        params = tmp_path / "params.yaml"
        params.write_text((ROOT / "params.yaml").read_text())
        (tmp_path / "snapshot").symlink_to(ROOT / "snapshot")
        result = CliRunner().invoke(
            app,
            [
                "rehydrate",
                str(tmp_path / "export"),
                "--out",
                str(tmp_path / "out"),
                "--params",
                str(params),
            ],
        )
    assert result.exit_code == 0, result.output
    assert "blocked_address" in result.output and url in result.output
