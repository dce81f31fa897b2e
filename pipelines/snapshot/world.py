"""Grow the embedded snapshot K-fold: a world of K x its events, for scale runs.

``benchsmith snapshot scale --factor K --out DIR`` writes ``DIR/wiki/export.xml`` (every article
page K times, the templates once), ``DIR/web/site`` (every authored page K times),
``DIR/web/wayback`` (every archived copy K times), ``DIR/web/pages.jsonl`` and
``DIR/web/traps.yaml`` (the search answers and misbehaving URLs of every copy, so dead links,
duplicates, mirrors and traps keep the snapshot's proportions), then records the web side with
the code behind ``benchsmith snapshot record-web`` (``DIR/web/archive`` and
``DIR/web/search.jsonl``), so the stages replay it offline, and ``DIR/world.json``: what was
written and the settings that point a build at it.

Copy 0 is the snapshot; each further copy renames, rescales, redates and reorders its text
(:mod:`pipelines.snapshot.world_text`). Each copy of an event is created on a day of its own: all
its revisions move by a seeded shift that keeps a page created in the creation window inside it
(and before the snapshot time) and a page created before the window before it. The authored
world is deterministic for a seed; the recording carries the times it was made at.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from pipelines.errors import BenchsmithError
from pipelines.outputs import staged_outputs
from pipelines.snapshot.site_server import page_file
from pipelines.snapshot.world_text import MONTHS, WEEKDAYS, CopyRewrite, invent_names, world_names

MAX_FACTOR = 10_000
_URL_SPLIT = ("https://", "http://")


class WorldTooLargeError(BenchsmithError):
    """The grown world would not fit where it is asked to go."""


@dataclass(frozen=True)
class _Page:
    """One page of the export: its XML element and what the copies need from it."""

    element: ET.Element
    title: str
    article: bool
    stamps: tuple[datetime, ...]


def _ns(root: ET.Element) -> str:
    return root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") else ""


def _read_export(path: Path) -> tuple[ET.Element, list[_Page], str]:
    root = ET.parse(path).getroot()
    ns = _ns(root)
    pages = []
    for page in root.findall(f"{ns}page"):
        stamps = tuple(
            datetime.strptime(t.text or "", "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            for t in page.iter(f"{ns}timestamp")
        )
        title = page.findtext(f"{ns}title") or ""
        article = (page.findtext(f"{ns}ns") or "0") == "0"
        pages.append(_Page(page, title, article, stamps))
    return root, pages, ns


def _shift_range(stamps: tuple[datetime, ...], start: datetime, end: datetime) -> tuple[int, int]:
    """Whole-day shifts that keep every stamp in the window ``[start, end)`` in it and every
    stamp before it before it."""
    lo, hi = -10_000, 10_000
    for t in stamps:
        if t >= start:
            lo = max(lo, (start - t).days + 1)
            hi = min(hi, (end - t).days - 1)
        else:
            hi = min(hi, (start - t).days - 1)
    return (lo, hi) if lo <= hi else (0, 0)


def _mw_sha1(text: str) -> str:
    """MediaWiki's revision checksum: SHA-1 in base 36, 31 digits."""
    value = int(hashlib.sha1(text.encode()).hexdigest(), 16)
    digits = ""
    while value:
        value, r = divmod(value, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return digits.rjust(31, "0")


def _site_url(site: Path, file: Path) -> str:
    """The URL a file under ``site`` is served at (the inverse of ``page_file``)."""
    rel = file.relative_to(site)
    host, path = rel.parts[0], "/".join(rel.parts[1:])
    if path == "index.html" or path.endswith("/index.html"):
        path = path[: -len("index.html")]
    elif path.endswith(".html"):
        path = path[: -len(".html")]
    return f"https://{host}/{path}"


class World:
    """The snapshot and everything its copies share: names, hosts, events' shifts."""

    def __init__(self, snapshot: Path, params: Any, seed: int):
        self.snapshot, self.seed = snapshot, seed
        wiki = params.wiki
        self.start = datetime.combine(wiki.created_after, datetime.min.time(), tzinfo=UTC)
        assert wiki.dump is not None
        self.end = wiki.dump.snapshot_at or datetime.now(UTC)
        self.export = snapshot / "wiki" / "export.xml"
        self.root, self.pages, self.ns = _read_export(self.export)
        web = snapshot / "web"
        self.site = web / "site"
        self.files = sorted(p for p in self.site.rglob("*") if p.is_file())
        self.manifest = [
            json.loads(line) for line in (web / "pages.jsonl").read_text("utf-8").splitlines()
        ]
        self.traps = yaml.safe_load((web / "traps.yaml").read_text("utf-8")) or {}
        texts = [
            "\n".join(t.text or "" for t in p.element.iter(f"{self.ns}text"))
            for p in self.pages
            if p.article
        ]
        html = [f.read_text("utf-8") for f in self.files if f.suffix == ".html"]
        protected = {*MONTHS, *WEEKDAYS, *wiki.skip_sections, *wiki.event_infoboxes,
                     *wiki.biography_infoboxes, *wiki.disambiguation_templates,
                     *(w for t in wiki.list_title_prefixes for w in t.split())}  # fmt: skip
        protected |= {
            w for p in self.pages if not p.article for w in p.title.replace(":", " ").split()
        }
        titles = [p.title for p in self.pages if p.article]
        self.names = world_names([*texts, *html], protected, titles)
        self.hosts = frozenset(
            {f.relative_to(self.site).parts[0] for f in self.files}
            | {_host(m["url"]) for m in self.manifest}
            | {_host(u) for t in texts for u in _urls(t)}
        )
        self.event_of = self._events(texts)
        self._taken = {w.lower() for w in self.names}

    def _events(self, texts: list[str]) -> dict[str, str]:
        """The event (page title) each URL belongs to: its search answers and its citations."""
        out = {m["url"]: m["event"] for m in self.manifest}
        for page, text in zip((p for p in self.pages if p.article), texts, strict=True):
            for url in _urls(text):
                out.setdefault(url, page.title)
        return out

    def copy(self, c: int) -> tuple[CopyRewrite, dict[str, int]]:
        """Copy ``c``'s rewriting and each article's shift in days."""
        names = invent_names(self.names, self.seed, c, self._taken) if c else {}
        rewrite = CopyRewrite(c, self.seed, names, self.hosts)
        shifts = {}
        for page in self.pages:
            lo, hi = _shift_range(page.stamps, self.start, self.end)
            rng = hashlib.sha256(f"{self.seed}:{c}:{page.title}".encode()).digest()
            shifts[page.title] = 0 if not c else lo + int.from_bytes(rng[:4], "big") % (hi - lo + 1)
        return rewrite, shifts

    def estimate_bytes(self, factor: int) -> int:
        """Bytes the grown world takes, with its recording (which the snapshot's archive scales)."""
        export = (self.snapshot / "wiki" / "export.xml").stat().st_size
        site = sum(f.stat().st_size for f in self.files)
        archive = sum(f.stat().st_size for f in (self.snapshot / "web" / "archive").glob("*"))
        return int(factor * (export + site + 2 * archive) * 1.1)


def _host(url: str) -> str:
    return urlsplit(url).hostname or ""


def _urls(text: str) -> Iterator[str]:
    for start in _URL_SPLIT:
        at = 0
        while (i := text.find(start, at)) >= 0:
            end = i
            while end < len(text) and text[end] not in " \t\n\"'<>|[]{}":
                end += 1
            yield text[i:end].rstrip(".,;:)")
            at = end


def _page_copy(world: World, page: _Page, c: int, rewrite: CopyRewrite, shift: int) -> ET.Element:
    ns = world.ns
    element = ET.fromstring(ET.tostring(page.element))
    if not c:
        return element
    page_id = element.find(f"{ns}id")
    if page_id is not None and (page_id.text or "").isdigit():
        page_id.text = str(int(page_id.text or 0) + c * 100_000)
    for revision in element.iter(f"{ns}revision"):
        for tag in ("id", "parentid"):
            node = revision.find(f"{ns}{tag}")
            if node is not None and (node.text or "").isdigit():
                node.text = str(int(node.text or 0) + c * 10_000_000)
    for node in element.iter(f"{ns}title"):
        node.text = rewrite.text(node.text or "", shift)
    for node in element.iter(f"{ns}timestamp"):
        stamp = datetime.strptime(node.text or "", "%Y-%m-%dT%H:%M:%SZ") + timedelta(days=shift)
        node.text = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    for revision in element.iter(f"{ns}revision"):
        text = revision.find(f"{ns}text")
        if text is not None and text.text:
            text.text = rewrite.text(text.text, shift)
            text.set("bytes", str(len(text.text.encode())))
            sha1 = revision.find(f"{ns}sha1")
            if sha1 is not None:
                sha1.text = _mw_sha1(text.text)
        for node in revision.iter(f"{ns}comment"):
            node.text = rewrite.text(node.text or "", shift)
    return element


def _write_export(
    world: World, path: Path, copies: list[tuple[CopyRewrite, dict[str, int]]]
) -> list[str]:
    """Write the grown export (the snapshot's own bytes, then every further copy's article
    pages); return the titles of its article pages."""
    ET.register_namespace("", world.ns.strip("{}"))
    original = world.export.read_text("utf-8")
    end = original.rindex("</mediawiki>")
    titles = [p.title for p in world.pages if p.article]
    with path.open("w", encoding="utf-8") as out:
        out.write(original[:end])
        for c, (rewrite, shifts) in enumerate(copies[1:], start=1):
            for page in world.pages:
                if page.article:
                    element = _page_copy(world, page, c, rewrite, shifts[page.title])
                    titles.append(element.findtext(f"{world.ns}title") or "")
                    out.write("  " + ET.tostring(element, encoding="unicode").strip() + "\n")
        out.write(original[end:])
    return titles


def _write_site(world: World, site: Path, copies: list[tuple[CopyRewrite, dict[str, int]]]) -> int:
    """Write every copy of every authored file; robots.txt gains each copy's rules."""
    written = 0
    for file in world.files:
        rel = file.relative_to(world.site)
        if file.name == "robots.txt":
            lines = file.read_text("utf-8").splitlines()
            out = []
            for line in lines:
                out.append(line)
                field, _, value = line.partition(":")
                if field.strip().lower() in ("allow", "disallow") and value.strip() not in (
                    "",
                    "/",
                ):
                    out += [f"{field}: {r.path(value.strip())}" for r, _ in copies[1:]]
            target = site / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n".join(out) + "\n", "utf-8")
            written += 1
            continue
        url = _site_url(world.site, file)
        event = world.event_of.get(url, "")
        for rewrite, shifts in copies:
            target = page_file(site, rewrite.url(url))
            target.parent.mkdir(parents=True, exist_ok=True)
            if file.suffix == ".html":
                html = rewrite.text(file.read_text("utf-8"), shifts.get(event, 0))
                target.write_text(html, "utf-8")
            else:
                shutil.copyfile(file, target)
            written += 1
    return written


def _write_wayback(
    world: World, wayback: Path, copies: list[tuple[CopyRewrite, dict[str, int]]]
) -> int:
    """Every copy of every archived copy in the archive stand-in, made at the same time."""
    written = 0
    folder = world.snapshot / "web" / "wayback"
    for stamp in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        for file in sorted(p for p in stamp.rglob("*.html") if p.is_file()):
            url = _site_url(stamp, file)
            event = world.event_of.get(url, "")
            for rewrite, shifts in copies:
                target = page_file(wayback / stamp.name, rewrite.url(url))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(
                    rewrite.text(file.read_text("utf-8"), shifts.get(event, 0)), "utf-8"
                )
                written += 1
    return written


def _write_manifests(
    world: World, web: Path, copies: list[tuple[CopyRewrite, dict[str, int]]]
) -> None:
    """The search answers and traps of every copy, the snapshot's own lines first."""
    with (web / "pages.jsonl").open("w", encoding="utf-8") as out:
        out.write((world.snapshot / "web" / "pages.jsonl").read_text("utf-8"))
        for rewrite, shifts in copies[1:]:
            for entry in world.manifest:
                shift = shifts.get(entry["event"], 0)
                row = {
                    **entry,
                    "event": rewrite.text(entry["event"], shift),
                    "url": rewrite.url(entry["url"]),
                }
                if "title" in entry:
                    row["title"] = rewrite.text(entry["title"], shift)
                out.write(json.dumps(row) + "\n")
    traps = {
        rewrite.url(url): trap for rewrite, _ in copies[1:] for url, trap in world.traps.items()
    }
    text = (world.snapshot / "web" / "traps.yaml").read_text("utf-8")
    if traps:
        text += "# the same traps in every further copy of the world\n"
        text += yaml.safe_dump(traps, sort_keys=False, default_flow_style=None, width=200)
    (web / "traps.yaml").write_text(text, "utf-8")


def grow(
    snapshot: Path, out: Path, factor: int, params: Any, *, seed: int = 0, record: bool = True
) -> dict[str, Any]:
    """Write the ``factor``-fold world to ``out`` (atomically) and record its web side; return
    what was written. Refuses, before writing anything, a factor the disk cannot hold."""
    if not 1 <= factor <= MAX_FACTOR:
        raise BenchsmithError(f"--factor must be between 1 and {MAX_FACTOR}, not {factor}")
    world = World(snapshot, params, seed)
    need = world.estimate_bytes(factor)
    out.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(out.parent).free
    if need > free * 0.9:
        raise WorldTooLargeError(
            f"a {factor}-fold world needs about {need / 1e9:.2f} GB, and {out.parent} has "
            f"{free / 1e9:.2f} GB free; lower --factor or pass another --out"
        )
    copies = [world.copy(c) for c in range(factor)]
    with staged_outputs(out) as scratch:
        (scratch / "wiki").mkdir()
        (scratch / "web").mkdir()
        titles = _write_export(world, scratch / "wiki" / "export.xml", copies)
        if len(set(titles)) != len(titles):
            twice = sorted({t for t in titles if titles.count(t) > 1})
            raise BenchsmithError(f"the grown world repeats page titles: {twice[:5]}")
        files = _write_site(world, scratch / "web" / "site", copies)
        files += _write_wayback(world, scratch / "web" / "wayback", copies)
        _write_manifests(world, scratch / "web", copies)
        summary: dict[str, Any] = {
            "factor": factor,
            "seed": seed,
            "snapshot": str(snapshot),
            "article_pages": len(titles),
            "site_files": files,
            "names_per_copy": len(world.names),
        }
        if record:
            summary["recording"] = _record(params, scratch, out)
        summary["bytes"] = sum(p.stat().st_size for p in scratch.rglob("*") if p.is_file())
        summary["settings"] = {
            "wiki.dump.path": str(out / "wiki" / "export.xml"),
            "web.archive": str(out / "web" / "archive"),
            "web.search_log": str(out / "web" / "search.jsonl"),
        }
        (scratch / "world.json").write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    return summary


def _record(params: Any, scratch: Path, out: Path) -> dict[str, Any]:
    """Record the grown web through ``record_web``, as ``benchsmith snapshot record-web`` does."""
    from pipelines.snapshot.record import record_web

    wiki, web = params.wiki, params.web
    assert wiki.dump is not None
    local = params.model_copy(
        update={
            "wiki": wiki.model_copy(
                update={
                    "dump": wiki.dump.model_copy(update={"path": scratch / "wiki" / "export.xml"})
                }
            ),
            "web": web.model_copy(
                update={
                    "archive": scratch / "web" / "archive",
                    "search_log": scratch / "web" / "search.jsonl",
                }
            ),
        }
    )
    return record_web(local, scratch / "web", when=wiki.dump.snapshot_at)
