"""Response bodies shaped like the Custom Search JSON API (customsearch#search), for HttpMockSequence."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

CSE_ID = "017576662512468239146:omuauf_lfve"


def result(i: int) -> dict:
    """The i-th result (1-based), as an ``items`` entry."""
    return {
        "kind": "customsearch#result",
        "title": f"Flood report {i}",
        "htmlTitle": f"<b>Flood</b> report {i}",
        "link": f"https://news{i}.example/2026/flood-{i}",
        "displayLink": f"news{i}.example",
        "snippet": f"Snippet {i} about the flood.",
        "htmlSnippet": f"Snippet {i} about the <b>flood</b>.",
        "formattedUrl": f"https://news{i}.example/2026/flood-{i}",
    }


def search_page(query: str, start: int, count: int, total: int) -> str:
    """One page of ``count`` results from ``start``, with ``nextPage`` while more remain."""
    request = {
        "title": f"Google Custom Search - {query}",
        "totalResults": str(total),
        "searchTerms": query,
        "count": count,
        "startIndex": start,
        "inputEncoding": "utf8",
        "outputEncoding": "utf8",
        "safe": "off",
        "cx": CSE_ID,
    }
    queries: dict = {"request": [request]}
    if start + count <= total:
        queries["nextPage"] = [{**request, "count": 10, "startIndex": start + count}]
    body = {
        "kind": "customsearch#search",
        "url": {
            "type": "application/json",
            "template": "https://www.googleapis.com/customsearch/v1?q={searchTerms}&num={count?}&start={startIndex?}&cx={cx?}&alt=json",
        },
        "queries": queries,
        "context": {"title": "benchsmith"},
        "searchInformation": {
            "searchTime": 0.21,
            "formattedSearchTime": "0.21",
            "totalResults": str(total),
            "formattedTotalResults": f"{total:,}",
        },
    }
    if count:
        body["items"] = [result(i) for i in range(start, start + count)]
    return json.dumps(body)


def empty_page(query: str) -> str:
    """No results: Google leaves out ``items`` and ``nextPage``."""
    return search_page(query, 1, 0, 0)


def error_body(code: int, reason: str, message: str) -> str:
    """A Google API error envelope."""
    status = {429: "RESOURCE_EXHAUSTED", 403: "PERMISSION_DENIED", 503: "UNAVAILABLE"}
    return json.dumps(
        {
            "error": {
                "code": code,
                "message": message,
                "errors": [{"message": message, "domain": "global", "reason": reason}],
                "status": status.get(code, "UNKNOWN"),
            }
        }
    )


def ok(body: str) -> tuple[dict, str]:
    return {"status": "200", "content-type": "application/json; charset=UTF-8"}, body


def failing(
    code: int, reason: str = "backendError", message: str = "Backend Error"
) -> tuple[dict, str]:
    return {"status": str(code), "content-type": "application/json; charset=UTF-8"}, error_body(
        code, reason, message
    )


def requested(http) -> list[dict[str, str]]:
    """The query parameters of every request an HttpMockSequence saw."""
    return [
        {k: v[0] for k, v in parse_qs(urlsplit(uri).query).items()}
        for uri, _method, _body, _headers in http.request_sequence
    ]
