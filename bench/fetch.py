"""Benchmark the fetcher: throughput as concurrency grows, against a slow loopback server.

A local server on 127.0.0.1 answers every page after 100 ms of injected latency; per-host limits
are disabled (per-host concurrency = concurrency, no delay), so the figures show what the global
concurrency buys. Run:

    python bench/fetch.py --pages 200 --levels 1 2 4 8 16 32
"""

from __future__ import annotations

import argparse
import os
import platform
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio

from pipelines.sources.web.fetch import Fetcher
from pipelines.sources.web.settings import FetchSettings

BODY = b"<html><body>" + b"<p>Benchmark paragraph text.</p>" * 100 + b"</body></html>"


class _Slow(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    latency_s = 0.1

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        time.sleep(self.latency_s)
        self.send_response(200 if self.path != "/robots.txt" else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)


def run(port: int, pages: int, concurrency: int) -> float:
    """Fetch ``pages`` distinct URLs at ``concurrency``; return pages per second."""
    settings = FetchSettings(
        concurrency=concurrency,
        per_host_concurrency=concurrency,
        per_host_delay_s=0,
        allow_addresses=["127.0.0.1/32"],
    )
    urls = [f"http://127.0.0.1:{port}/page/{concurrency}/{i}" for i in range(pages)]

    async def main() -> None:
        async with Fetcher(settings) as fetcher:
            results = await fetcher.fetch_all(urls)
        assert all(r.status == "ok" for r in results), {r.status for r in results}

    start = time.perf_counter()
    anyio.run(main)
    return pages / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}; {args.pages} pages, 100 ms latency each"
    )
    print("| concurrency | pages/s | vs concurrency 1 |")
    print("|---:|---:|---:|")
    base = None
    for level in args.levels:
        rate = run(port, args.pages, level)
        base = base or rate
        print(f"| {level} | {rate:,.1f} | {rate / base:.1f}x |")
    server.shutdown()


if __name__ == "__main__":
    main()
