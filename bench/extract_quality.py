"""Benchmark web-page text extraction on trafilatura's labelled evaluation pages, in one process.

The pages and their labels come from trafilatura's own evaluation set (github.com/adbar/trafilatura,
``tests/evaldata.json`` and the HTML under ``tests/eval/`` and ``tests/cache/``): about 990 pages,
each with "with" snippets (main text, which must be in the extraction) and "without" snippets
(boilerplate, which must not be). Every configuration extracts every page; a snippet counts as
found when its whitespace-normalised text is a substring of the whitespace-normalised extraction,
as trafilatura's evaluation counts it. Reported per configuration: snippet recall (share of "with"
snippets found), boilerplate leak (share of "without" snippets found), precision and F1 as
trafilatura's evaluation defines them (a found "with" snippet is a true positive, a found "without"
one a false positive), pages/s (per second of this process's CPU time in extraction calls, so
that other work on the machine does not move it), pages that failed (no text) and, for the
project's extraction, pages under ``min_words`` (``too_short``: kept, but later stages use only
``ok`` documents).

The configurations: the web stage's extraction as the stage runs it (``extract_one`` with the
default ``ExtractSettings``, on the text the fetcher decodes, with the page URL), the other
combinations of favor_precision and include_tables (and one with include_comments),
``trafilatura.extract(html)`` with trafilatura's defaults, and the settings trafilatura's
evaluation uses (``include_comments=False, include_tables=True``; balanced, precision, recall
and fast). Afterwards the stage's settings run once more through ``extract_many`` (its worker
pool, as the stage runs it) to check they give the same text.

The data is never part of this repository. The first run copies it into
``.cache/bench/trafilatura-eval/`` from a trafilatura clone, a git directory or a git URL:

    python bench/extract_quality.py --eval-from https://github.com/adbar/trafilatura
    python bench/extract_quality.py --eval-from ~/src/trafilatura        # a checkout
    python bench/extract_quality.py --eval-from mirror.git --rev v2.0.0  # a (bare) git dir
    python bench/extract_quality.py                                      # later runs: the cache
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import IO

from pipelines.sources.web.extract import ExtractSettings, extract_many, extract_one
from pipelines.sources.web.http_body import decode_text

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "bench" / "trafilatura-eval"
LABELS = "evaldata.json"
PAGES = "pages"
SOURCE = "source.json"
UPSTREAM = "https://github.com/adbar/trafilatura"
# where trafilatura keeps the set; a page in cache/ wins over one of the same name in eval/
FOLDERS = ("tests/cache", "tests/eval")

HOW_TO_GET = f"""\
trafilatura's labelled pages belong in {CACHE.relative_to(ROOT)}/ (never committed); copy them
there once with one of
    python bench/extract_quality.py --eval-from {UPSTREAM}
    python bench/extract_quality.py --eval-from PATH/TO/trafilatura        (a clone)
    python bench/extract_quality.py --eval-from PATH/TO/trafilatura.git    (a git directory)
(the set is tests/evaldata.json with the pages under tests/eval/ and tests/cache/)"""


@dataclass
class Page:
    """One labelled page: its URL, file, HTML and the snippets it must and must not yield."""

    url: str
    file: str
    html: bytes
    text: str = ""
    """The HTML decoded as the web stage's fetcher decodes a body with no declared charset."""
    must: list[str] = field(default_factory=list)
    must_not: list[str] = field(default_factory=list)


# --- getting the data -------------------------------------------------------------------------


def _git(*args: str, capture: bool = True) -> str:
    done = subprocess.run(["git", *args], check=True, capture_output=capture, text=True)
    return done.stdout.strip() if capture else ""


def _is_git_dir(path: Path) -> bool:
    if not path.is_dir():
        return False
    probe = subprocess.run(
        ["git", "--git-dir", str(path), "rev-parse", "--git-dir"], capture_output=True
    )
    return probe.returncode == 0 and (path / "objects").is_dir()


def _safe_name(name: str) -> bool:
    return bool(name) and Path(name).name == name and name not in {".", ".."}


class _Store:
    """Writes the labels and the pages they name into a new cache folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        (folder / PAGES).mkdir(parents=True)
        self.labels: bytes | None = None
        self.ranks: dict[str, int] = {}

    def add(self, relpath: str, read: Callable[[], IO[bytes] | None]) -> None:
        """Keep ``relpath`` if it is the labels or a page of a known folder (first folder wins)."""
        if relpath == f"tests/{LABELS}":
            stream = read()
            if stream is not None:
                self.labels = stream.read()
            return
        parent, _, name = relpath.rpartition("/")
        if parent not in FOLDERS or not _safe_name(name):
            return
        rank = FOLDERS.index(parent)
        if self.ranks.get(name, len(FOLDERS)) <= rank:
            return
        stream = read()
        if stream is not None:
            (self.folder / PAGES / name).write_bytes(stream.read())
            self.ranks[name] = rank

    def finish(self, origin: str, commit: str) -> None:
        if self.labels is None:
            raise SystemExit(f"no tests/{LABELS} in {origin}\n{HOW_TO_GET}")
        (self.folder / LABELS).write_bytes(self.labels)
        info = {"from": origin, "commit": commit, "files": len(self.ranks)}
        (self.folder / SOURCE).write_text(json.dumps(info, indent=2) + "\n")


def _from_checkout(store: _Store, root: Path) -> str:
    for relpath in (f"tests/{LABELS}", *FOLDERS):
        path = root / relpath
        files = [path] if path.is_file() else sorted(path.iterdir()) if path.is_dir() else []
        for file in files:
            if file.is_file():
                store.add(file.relative_to(root).as_posix(), partial(file.open, "rb"))
    try:
        return _git("-C", str(root), "rev-parse", "HEAD")
    except (subprocess.CalledProcessError, FileNotFoundError):
        return ""


def _from_git_dir(store: _Store, git_dir: Path, rev: str) -> str:
    commit = _git("--git-dir", str(git_dir), "rev-parse", "--verify", f"{rev}^{{commit}}")
    listed = _git("--git-dir", str(git_dir), "ls-tree", "--name-only", commit, "tests/")
    wanted = [p for p in (f"tests/{LABELS}", *FOLDERS) if p in listed.splitlines()]
    cmd = ["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, "--", *wanted]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            for member in tar:
                if member.isfile():
                    store.add(member.name, partial(tar.extractfile, member))
    if proc.returncode:
        raise SystemExit(f"git archive failed in {git_dir} (exit code {proc.returncode})")
    return commit


def obtain(source: str, rev: str | None) -> None:
    """Copy the labels and pages from ``source`` into the cache, replacing what was there."""
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="trafilatura-eval.", dir=CACHE.parent))
    try:
        store = _Store(staging / "set")
        path = Path(source).expanduser()
        if path.is_dir() and (path / "tests" / LABELS).is_file() and rev is None:
            commit = _from_checkout(store, path)
        elif _is_git_dir(path) or _is_git_dir(path / ".git"):
            git_dir = path if _is_git_dir(path) else path / ".git"
            commit = _from_git_dir(store, git_dir, rev or "HEAD")
        elif path.exists():
            raise SystemExit(f"{source} is neither a trafilatura clone nor a git directory")
        else:  # a git URL
            clone = staging / "clone.git"
            depth = [] if rev else ["--depth", "1"]
            print(f"cloning {source} ...", flush=True)
            try:
                _git("clone", "--quiet", "--bare", *depth, source, str(clone), capture=False)
            except subprocess.CalledProcessError:
                raise SystemExit(f"could not clone {source}\n{HOW_TO_GET}") from None
            commit = _from_git_dir(store, clone, rev or "HEAD")
        store.finish(source, commit)
        if CACHE.exists():
            shutil.rmtree(CACHE)
        (staging / "set").rename(CACHE)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# --- reading it -------------------------------------------------------------------------------


def load(limit: int | None = None) -> tuple[list[Page], dict[str, object]]:
    """The labelled pages in the cache, in URL order; and where they came from."""
    labels_file = CACHE / LABELS
    if not labels_file.is_file():
        raise SystemExit(f"no labelled pages yet\n{HOW_TO_GET}")
    labels = json.loads(labels_file.read_text("utf-8"))
    if not isinstance(labels, dict) or not labels:
        raise SystemExit(f"{labels_file}: expected an object of URL -> labels")
    pages = []
    for url in sorted(labels)[:limit]:
        item = labels[url]
        name = item.get("file") if isinstance(item, dict) else None
        if not isinstance(name, str) or not _safe_name(name):
            raise SystemExit(f"{labels_file}: {url}: no valid 'file'")
        snippets = [item.get(key) for key in ("with", "without")]
        if not all(isinstance(s, list) and all(isinstance(x, str) for x in s) for s in snippets):
            raise SystemExit(f"{labels_file}: {url}: 'with' and 'without' must be lists of text")
        path = CACHE / PAGES / name
        if not path.is_file():
            raise SystemExit(f"{path} is missing; refresh the cache with --eval-from\n{HOW_TO_GET}")
        html = path.read_bytes()
        must, must_not = ([s for s in group if s.strip()] for group in snippets)
        text = decode_text(html, "")[0]  # the text, as the fetcher decodes a body
        pages.append(Page(url, name, html, text, must, must_not))
    source_file = CACHE / SOURCE
    source = json.loads(source_file.read_text()) if source_file.is_file() else {}
    return pages, source


# --- configurations ---------------------------------------------------------------------------

Runner = Callable[[Page], tuple[str, str]]
"""Extracts one page; returns its text ("" when nothing) and a status: ok, failed or too_short."""


def ours(settings: ExtractSettings) -> Runner:
    """The project's extraction, as the web stage calls it: decoded text and the page URL."""

    def run(page: Page) -> tuple[str, str]:
        result = extract_one(page.url, page.text, page.url, settings)
        status = "failed" if result.status == "extract_failed" else result.status
        return result.text, status

    return run


def theirs(**options: bool) -> Runner:
    """``trafilatura.extract`` on the page's bytes, plain text output, as trafilatura's eval."""
    from trafilatura import extract

    def run(page: Page) -> tuple[str, str]:
        text = extract(page.html, **options)
        return (text, "ok") if text else ("", "failed")

    return run


EVAL = {"include_comments": False, "include_tables": True}
"""The options trafilatura's evaluation passes to every trafilatura run."""


VARIANTS = [
    *({"favor_precision": p, "include_tables": t} for p in (True, False) for t in (False, True)),
    {"favor_precision": False, "include_tables": True, "include_comments": True},
]
"""trafilatura options of the project's extraction worth measuring besides the stage's own."""


def describe(settings: ExtractSettings) -> str:
    """The trafilatura options of ``settings`` in a few words."""
    words = ["precision" if settings.favor_precision else "balanced"]
    words.append("tables" if settings.include_tables else "no tables")
    return ", ".join(words + ["comments"] * settings.include_comments)


def configurations() -> dict[str, Runner]:
    """Label -> runner; the web stage's defaults first, then variants, then trafilatura's own."""
    stage = ExtractSettings()
    runners = {f"web stage defaults ({describe(stage)})": ours(stage)}
    for update in VARIANTS:
        variant = stage.model_copy(update={"include_comments": False, **update})
        if variant != stage:
            runners[f"ours: {describe(variant)}"] = ours(variant)
    return runners | {
        "trafilatura.extract(html), its defaults": theirs(),
        "trafilatura eval: balanced": theirs(**EVAL),
        "trafilatura eval: favor_precision": theirs(favor_precision=True, **EVAL),
        "trafilatura eval: favor_recall": theirs(favor_recall=True, **EVAL),
        "trafilatura eval: fast": theirs(fast=True, **EVAL),
    }


# --- scoring ----------------------------------------------------------------------------------


def norm(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Score:
    """Snippet counts over pages, extraction time and page statuses of one configuration."""

    found: int = 0
    missed: int = 0
    leaked: int = 0
    kept_out: int = 0
    seconds: float = 0.0
    pages: int = 0
    failed: int = 0
    short: int = 0

    def add(self, page: Page, text: str, status: str, seconds: float) -> None:
        normed = norm(text)
        hits = sum(norm(s) in normed for s in page.must)
        leaks = sum(norm(s) in normed for s in page.must_not)
        self.found += hits
        self.missed += len(page.must) - hits
        self.leaked += leaks
        self.kept_out += len(page.must_not) - leaks
        self.seconds += seconds
        self.pages += 1
        self.failed += status == "failed"
        self.short += status == "too_short"

    @property
    def recall(self) -> float:
        return self.found / max(self.found + self.missed, 1)

    @property
    def leak(self) -> float:
        return self.leaked / max(self.leaked + self.kept_out, 1)

    @property
    def precision(self) -> float:
        return self.found / max(self.found + self.leaked, 1)

    @property
    def f1(self) -> float:
        return 2 * self.found / max(2 * self.found + self.leaked + self.missed, 1)


def measure(pages: list[Page], run: Runner) -> tuple[Score, list[str]]:
    """Run one configuration over every page; its score and its texts."""
    score, texts = Score(), []
    for page in pages:
        start = time.process_time()
        try:
            text, status = run(page)
        except Exception:  # a crash on one page is a failed page, as in trafilatura's eval
            text, status = "", "failed"
        score.add(page, text, status, time.process_time() - start)
        texts.append(text)
    return score, texts


def pool_check(pages: list[Page], expected: list[str]) -> str:
    """Run the stage's defaults through ``extract_many``; say whether the texts match."""
    settings = ExtractSettings()
    docs: Iterator[tuple[str, str | bytes, str]] = ((p.url, p.text, p.url) for p in pages)
    start = time.perf_counter()
    texts = [r.text for r in extract_many(docs, settings)]
    seconds = time.perf_counter() - start
    same = sum(a == b for a, b in zip(texts, expected, strict=True))
    return (
        f"extract_many with the stage defaults ({settings.workers} workers, timeout "
        f"{settings.timeout_s:g} s): same text as extract_one on {same:,} of {len(pages):,} pages, "
        f"{len(pages) / seconds:,.1f} pages/s including worker start-up"
    )


def cpu_model() -> str:
    """The CPU's model name, from /proc/cpuinfo where there is one."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--eval-from",
        metavar="SOURCE",
        help="copy the labelled set into the cache from a trafilatura clone, git dir or git URL",
    )
    parser.add_argument("--rev", help="with --eval-from: the commit or tag to read (default HEAD)")
    parser.add_argument("--limit", type=int, help="only the first N pages (by URL), for a try")
    parser.add_argument("--no-pool", action="store_true", help="skip the extract_many check")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)  # trafilatura logs every page it discards
    if args.eval_from:
        obtain(args.eval_from, args.rev)
    pages, source = load(args.limit)
    musts = sum(len(p.must) for p in pages)
    must_nots = sum(len(p.must_not) for p in pages)
    mb = sum(len(p.html) for p in pages) / 1e6

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {cpu_model()}, "
        f"python {platform.python_version()}, {date.today().isoformat()}"
    )
    print(f"trafilatura {version('trafilatura')}")
    commit = str(source.get("commit") or "unknown commit")
    print(f"eval set: trafilatura {commit[:12]}, {len(pages):,} pages ({mb:,.1f} MB), ", end="")
    print(f"{musts:,} 'with' and {must_nots:,} 'without' snippets")
    print(
        "\n| configuration | recall | boilerplate leak | precision | F1 | pages/s | failed "
        "| too short |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    runners = configurations()
    for run in runners.values():  # lazy imports and first-call set-up, outside the timings
        for page in pages[:3]:
            run(page)
    stage_texts: list[str] = []
    for label, run in runners.items():
        score, texts = measure(pages, run)
        stage_texts = stage_texts or texts
        short = "-" if label.startswith("trafilatura") else f"{score.short:,}"
        print(
            f"| {label} | {score.recall:.1%} | {score.leak:.1%} | {score.precision:.1%} | "
            f"{score.f1:.3f} | {score.pages / score.seconds:,.1f} | {score.failed:,} | {short} |",
            flush=True,
        )
    if not args.no_pool:
        print(f"\n{pool_check(pages, stage_texts)}")


if __name__ == "__main__":
    main()
