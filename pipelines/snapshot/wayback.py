"""The snapshot's web archive stand-in: answers like the Wayback Machine from authored copies.

Copies live in ``wayback/<timestamp>/<host>/<path>.html`` (a 14-digit capture time, then the
page's place as in ``site/``). Served under :data:`ARCHIVE_HOST`, the stand-in speaks:

- the availability API (https://archive.org/help/wayback_api.php): ``/wayback/available?url=
  <url>&timestamp=<YYYYMMDD...>`` answers ``{"url": ..., "archived_snapshots": {"closest":
  {"available": true, "url": ..., "timestamp": ..., "status": "200"}}}`` with the copy closest
  to the timestamp (the newest without one), or ``{"url": ..., "archived_snapshots": {}}``;
- mementos: ``/web/<timestamp><flag>/<url>`` serves the copy made at that time with
  ``Memento-Datetime`` and a ``Link`` to the original (RFC 7089), or redirects to the closest
  copy's time as Wayback does, keeping the flag (``id_``: the raw page); 404 when none exists.
"""

from __future__ import annotations

import json
from datetime import datetime
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from pipelines.sources.web.archives import memento_parts, memento_time, page_key

ARCHIVE_HOST = "web.archive.example"
Answer = tuple[int, dict[str, str], bytes]
"""An HTTP answer: status, headers, body."""


class Mementos:
    """The authored copies under ``folder``, by page (as :func:`page_key` spells it)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.copies: dict[tuple[str, str, str], list[tuple[str, Path]]] = {}
        for stamp in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
            for path in sorted(p for p in stamp.rglob("*") if p.is_file()):
                self.copies.setdefault(page_key(_original(stamp, path)), []).append(
                    (stamp.name, path)
                )

    def closest(self, url: str, timestamp: str = "") -> tuple[str, Path] | None:
        """The copy of ``url`` made closest to ``timestamp`` (the newest without one)."""
        copies = self.copies.get(page_key(url), [])
        if not copies or not timestamp:
            return copies[-1] if copies else None
        aim = memento_time(timestamp) or datetime.min
        return min(copies, key=lambda c: abs(((memento_time(c[0]) or aim) - aim).total_seconds()))

    def answer(self, path: str) -> Answer:
        """The stand-in's answer to a GET of ``path`` (with its query)."""
        parts = urlsplit(path)
        if parts.path == "/wayback/available":
            return self._available(parse_qs(parts.query))
        found = memento_parts(f"https://{ARCHIVE_HOST}{path}")
        if found is None:
            return 404, {"Content-Type": "text/plain"}, b"404\n"
        _, stamp, original = found
        flag = path.split("/", 3)[2][len(stamp) :]
        copy = self.closest(original, stamp)
        if copy is None:
            return 404, {"Content-Type": "text/plain"}, b"404\n"
        if copy[0] != stamp:
            return 302, {"Location": f"/web/{copy[0]}{flag}/{original}"}, b""
        made = memento_time(copy[0])
        assert made is not None
        headers = {
            "Content-Type": "text/html; charset=utf-8",
            "Memento-Datetime": format_datetime(made, usegmt=True),
            "Link": f'<{original}>; rel="original"',
        }
        return 200, headers, copy[1].read_bytes()

    def _available(self, query: dict[str, list[str]]) -> Answer:
        url = query.get("url", [""])[0]
        copy = self.closest(url, query.get("timestamp", [""])[0]) if url else None
        snapshots = {}
        if copy is not None:
            memento = (
                f"https://{ARCHIVE_HOST}/web/{copy[0]}/{_original(self.folder / copy[0], copy[1])}"
            )
            snapshots["closest"] = {
                "available": True,
                "url": memento,
                "timestamp": copy[0],
                "status": "200",
            }
        body = json.dumps({"url": url, "archived_snapshots": snapshots}).encode()
        return 200, {"Content-Type": "application/json"}, body


def _original(stamp: Path, path: Path) -> str:
    """The URL a copy at ``path`` (under the folder ``stamp``) was made of: the inverse of
    :func:`~pipelines.snapshot.site_server.page_file`."""
    relative = path.relative_to(stamp).as_posix()
    host, _, rest = relative.partition("/")
    if rest.endswith("index.html"):
        rest = rest[: -len("index.html")]
    elif rest.endswith(".html"):
        rest = rest[: -len(".html")]
    return f"https://{host}/{rest}"
