"""Loopback stand-ins for the live search APIs, answering with their documented JSON.

One server speaks three APIs, told apart by path and parameters:
- Brave Search API (``GET /res/v1/web/search``, key in ``X-Subscription-Token``; bodies as
  https://api-dashboard.search.brave.com/app/documentation/web-search/responses shows them:
  ``{"type": "search", "query": {…, "more_results_available"}, "web": {"results": [{"title",
  "url", "description"}]}}``; errors ``{"type": "ErrorResponse", "error": {"id", "status",
  "code", "detail", "meta"}}``);
- SerpApi (``GET /search?engine=google&api_key=…``; https://serpapi.com/search-api and
  https://serpapi.com/api-status-and-error-codes: ``search_metadata``, ``organic_results[]``
  with ``position``, ``title``, ``link``, ``snippet``, ``serpapi_pagination.next``; errors
  ``{"error": "…"}``);
- SearXNG (``GET /search?format=json``; https://docs.searxng.org/dev/search_api.html:
  ``{"query", "number_of_results", "results": [{"url", "title", "content", "engine"}], …}``).

A query ``"<anything> nNN"`` has NN results in all (default 25); ``scripted`` answers, when
given, are served first, one per request, before the normal behaviour.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pipelines.snapshot.site_server import in_thread
from tests.support.http_server import reply

# fake keys, written in two parts (as tests/support/canary.py does) so that secret scanners
# reading the repository do not take them for real ones
BRAVE_KEY = "BSA" + "test-brave-key-FAKE0123456789"
SERPAPI_KEY = "serp" + "test-FAKE-0123456789abcdefghijklmnopqrstuvwxyz"


def results_for(query: str) -> int:
    """How many results the stand-ins hold for ``query``."""
    match = re.search(r"\bn(\d+)$", query)
    return int(match.group(1)) if match else 25


def hit(i: int) -> dict[str, str]:
    """The ``i``-th (1-based) result every API returns for a query."""
    return {"url": f"https://news{i}.example/story-{i}", "title": f"Story {i}",
            "text": f"Snippet {i} about the event."}  # fmt: skip


def brave_error(status: int, code: str, detail: str) -> dict[str, Any]:
    """Brave's documented error body."""
    return {"type": "ErrorResponse", "time": 1764200000,
            "error": {"id": "9f3a1c2e-test", "status": status, "code": code, "detail": detail,
                      "meta": {"component": "api"}}}  # fmt: skip


@dataclass
class Answer:
    """A scripted answer: status, body (a JSON value, or raw text) and headers."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class SearchApis:
    """The running server: its base URL, the requests seen, and answers still scripted."""

    base_url: str
    requests: list[dict[str, Any]]
    scripted: list[Answer]


def _brave(params: dict[str, str], headers: Any) -> Answer:
    if headers.get("X-Subscription-Token") != BRAVE_KEY:
        detail = "The provided subscription token is invalid."
        return Answer(422, brave_error(422, "SUBSCRIPTION_TOKEN_INVALID", detail))
    q, count, offset = params["q"], int(params.get("count", 20)), int(params.get("offset", 0))
    total = results_for(q)
    first = offset * count
    items = [hit(i) for i in range(first + 1, min(total, first + count) + 1)]
    return Answer(200, {
        "type": "search",
        "query": {"original": q, "more_results_available": first + count < total},
        "mixed": {"type": "mixed", "main": []},
        "web": {"type": "search", "family_friendly": True, "results": [
            {"type": "search_result", "title": h["title"], "url": h["url"],
             "description": h["text"], "age": "November 2, 2026", "language": "en"}
            for h in items]},
    })  # fmt: skip


def _serpapi(params: dict[str, str]) -> Answer:
    if params.get("api_key") != SERPAPI_KEY:
        return Answer(401, {"error": "Invalid API key. Your API key should be here: "
                                     "https://serpapi.com/manage-api-key"})  # fmt: skip
    q, start = params["q"], int(params.get("start", 0))
    total = results_for(q)
    items = [hit(i) for i in range(start + 1, min(total, start + 10) + 1)]
    body: dict[str, Any] = {
        "search_metadata": {"id": "test", "status": "Success", "total_time_taken": 0.9},
        "search_parameters": {"engine": "google", "q": q},
        "search_information": {"query_displayed": q, "total_results": total},
    }
    if not items:
        body["search_information"]["organic_results_state"] = "Fully empty"
        body["error"] = "Google hasn't returned any results for this query."
        return Answer(200, body)
    body["organic_results"] = [
        {"position": start + n + 1, "title": h["title"], "link": h["url"], "snippet": h["text"]}
        for n, h in enumerate(items)
    ]
    if start + 10 < total:
        body["serpapi_pagination"] = {"current": start // 10 + 1,
                                      "next": f"https://serpapi.com/search.json?start={start + 10}"}  # fmt: skip
    return Answer(200, body)


def _searxng(params: dict[str, str]) -> Answer:
    q, pageno = params["q"], int(params.get("pageno", 1))
    total = results_for(q)
    first = (pageno - 1) * 10
    items = [hit(i) for i in range(first + 1, min(total, first + 10) + 1)]
    return Answer(200, {  # number_of_results left out, as SearXNG does since 2026-05
        "query": q,
        "results": [{"url": h["url"], "title": h["title"], "content": h["text"],
                     "engine": "duckduckgo", "engines": ["duckduckgo"], "score": 1.0,
                     "category": "general"} for h in items],
        "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
        "unresponsive_engines": [],
    })  # fmt: skip


@contextmanager
def search_apis(scripted: list[Answer] | None = None) -> Iterator[SearchApis]:
    """Serve the three APIs on 127.0.0.1 until the block ends."""
    state = SearchApis("", [], list(scripted or []))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            state.requests.append({"path": parts.path, "params": params,
                                   "headers": dict(self.headers)})  # fmt: skip
            if state.scripted:
                answer = state.scripted.pop(0)
            elif parts.path == "/res/v1/web/search":
                answer = _brave(params, self.headers)
            elif parts.path == "/search" and params.get("engine") == "google":
                answer = _serpapi(params)
            elif parts.path == "/search" and params.get("format") == "json":
                answer = _searxng(params)
            else:
                answer = Answer(404, {"error": "not found"})
            body = answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
            reply(self, answer.status, body.encode(), "application/json", answer.headers)

        def log_message(self, *args: object) -> None:
            pass

    with in_thread(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as server:
        state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
        yield state
