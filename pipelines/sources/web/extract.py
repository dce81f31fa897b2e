"""Main text, title, date and language of fetched web pages, with trafilatura, in guarded workers.

:func:`extract_one` runs trafilatura on one page. :func:`extract_many` runs an extractor over a
stream of ``(doc_id, html, url)`` in worker processes with a per-document timeout, so that one
pathological page (runaway parse, crash in C code) becomes an ``extract_failed`` record with a
reason instead of hanging or killing the stage. Nothing is dropped: every input yields exactly one
:class:`Extraction`, in input order.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import time
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Literal

from pydantic import Field, StrictBool, StrictInt

from builders.settings import Strict
from builders.text import length_unit, text_length
from pipelines.errors import BenchsmithError

log = logging.getLogger(__name__)

Status = Literal["ok", "extract_failed", "too_short"]

_START_TIMEOUT_S = 120.0
"""How long a new worker may take to start (interpreter, imports) before the stage gives up."""
_READY = "ready"


class ExtractWorkerError(BenchsmithError):
    """Extraction worker processes cannot start (they die or hang before taking any work)."""


class ExtractSettings(Strict):
    """The ``web.extract`` settings: trafilatura options and the worker pool."""

    workers: StrictInt = Field(
        2,
        ge=1,
        description=(
            "Worker processes. 1 still runs one worker process, so the per-document timeout "
            "holds; extract_one can be called directly for in-process extraction."
        ),
    )
    timeout_s: float = Field(
        20.0, gt=0, description="Seconds one document may take before its worker is killed."
    )
    min_words: StrictInt = Field(
        50,
        ge=0,
        description=(
            "Pages with fewer words are too_short (kept, with their text). WikiGenBench: a third "
            "of its search documents had under 50 words, i.e. were dead pages."
        ),
    )
    favor_precision: StrictBool = Field(
        False,
        description=(
            "trafilatura: less boilerplate, but less text. Off by default: on trafilatura's "
            "labelled pages (bench/extract_quality.py), with tables, it cost 2.5 points of snippet "
            "recall and 2 pages with no text for 2.1 points less boilerplate leak."
        ),
    )
    include_tables: StrictBool = Field(
        True,
        description=(
            "trafilatura: keep table text (recipes, results, schedules): +1.0 to 1.9 points of "
            "snippet recall for 0.2 to 0.4 more boilerplate leak on the same pages."
        ),
    )
    include_comments: StrictBool = Field(
        False, description="trafilatura: append reader comments to the text."
    )
    batch_docs: StrictInt = Field(
        64, ge=1, description="Most documents held at once (read, not yet yielded)."
    )


@dataclass
class Extraction:
    """What was extracted from one document, or why nothing usable was."""

    doc_id: str
    status: Status
    reason: str = ""
    text: str = ""
    title: str = ""
    date: str = ""
    """Publication date as ISO ``YYYY-MM-DD``; empty when none was found."""
    language: str = ""
    """From trafilatura's metadata, else the page's ``<html lang>``; empty when unknown."""
    word_count: int = 0
    length_unit: str = "words"
    """What ``word_count`` counts: characters for Chinese and Japanese pages, else words."""


Extractor = Callable[[str, str | bytes, str, ExtractSettings], Extraction]
"""A picklable top-level function ``(doc_id, html, url, settings) -> Extraction``."""


def _failed(doc_id: str, reason: str) -> Extraction:
    return Extraction(doc_id=doc_id, status="extract_failed", reason=reason)


def extract_one(
    doc_id: str, html: str | bytes, url: str, settings: ExtractSettings | None = None
) -> Extraction:
    """Extract one page with trafilatura, in this process.

    An empty page, one that is not HTML, or one with no main text is ``extract_failed``; one with
    fewer than ``settings.min_words`` words is ``too_short`` and keeps its text.
    """
    settings = settings or ExtractSettings()
    if not html or not html.strip():
        return _failed(doc_id, "empty document")
    from trafilatura import bare_extraction
    from trafilatura.utils import load_html

    try:
        tree = load_html(html)
        if tree is None:
            return _failed(doc_id, "not parseable as HTML")
        page_lang = (tree.getroottree().getroot().get("lang") or "").strip()
        doc = bare_extraction(
            tree,
            url=url or None,
            with_metadata=True,
            favor_precision=settings.favor_precision,
            include_tables=settings.include_tables,
            include_comments=settings.include_comments,
        )
    except Exception as exc:  # trafilatura and lxml raise many kinds; record, do not crash
        log.debug("%s: trafilatura failed", doc_id, exc_info=True)
        return _failed(doc_id, f"trafilatura error: {type(exc).__name__}: {exc}")
    text = (doc.text or "").strip() if doc is not None else ""
    if not text:
        return _failed(doc_id, "no main text found")
    if settings.include_comments and doc.comments:
        text = f"{text}\n{doc.comments.strip()}"  # as trafilatura's own text output does
    text = unicodedata.normalize("NFC", text)  # as trafilatura's own text output does too
    return finished(
        doc_id,
        text,
        settings,
        title=(doc.title or "").strip(),
        date=doc.date or "",
        language=(doc.language or page_lang or "").strip(),
    )


def finished(doc_id: str, text: str, settings: ExtractSettings, **metadata: str) -> Extraction:
    """An extraction of ``text``: ``ok``, or ``too_short`` under ``settings.min_words``.

    Chinese and Japanese pages are measured in characters, others in words. Plain-text
    documents come straight here, with nothing to extract.
    """
    unit = length_unit(metadata.get("language", ""))
    length = text_length(text, unit)
    short = length < settings.min_words
    return Extraction(
        doc_id=doc_id,
        status="too_short" if short else "ok",
        reason=f"{length} {unit}, under min_words {settings.min_words}" if short else "",
        text=text,
        word_count=length,
        length_unit=unit,
        **metadata,
    )


def _worker_main(conn: Connection, extractor: Extractor, settings: ExtractSettings) -> None:
    """Worker loop: answer each ``(doc_id, html, url)`` with an Extraction until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent cleans up on Ctrl-C
    import trafilatura  # noqa: F401  # preloaded so the import is not charged to a document

    conn.send(_READY)
    while True:
        try:
            task = conn.recv()
        except EOFError:  # the parent is gone
            return
        if task is None:
            return
        doc_id, html, url = task
        try:
            result = extractor(doc_id, html, url, settings)
        except Exception as exc:  # an extractor bug fails one document, not the stage
            result = _failed(doc_id, f"extractor raised {type(exc).__name__}: {exc}")
        conn.send(result)


@dataclass(eq=False)
class _Worker:
    proc: BaseProcess
    conn: Connection
    started_at: float
    ready: bool = False
    index: int | None = None
    """Input position of the document being extracted; None when idle."""
    doc_id: str = ""
    deadline: float = 0.0
    stopped: bool = False


class _Pool:
    """Worker processes fed one document at a time, each with a deadline; dead ones replaced."""

    def __init__(self, settings: ExtractSettings, extractor: Extractor) -> None:
        self.settings = settings
        self.extractor = extractor
        self.context = multiprocessing.get_context("spawn")
        self.workers: list[_Worker] = []

    def __enter__(self) -> _Pool:
        self.workers = [self._start() for _ in range(self.settings.workers)]
        return self

    def __exit__(self, *exc: object) -> None:
        stopping = []
        for worker in self.workers:
            if worker.ready and worker.index is None:
                try:
                    worker.conn.send(None)
                    stopping.append(worker)
                except OSError:
                    pass
        for worker in self.workers:
            if worker in stopping:
                worker.proc.join(timeout=2)
            self._stop(worker)  # kills what is still running: busy, starting or slow to exit
        self.workers = []

    def _start(self) -> _Worker:
        parent, child = self.context.Pipe()
        proc = self.context.Process(
            target=_worker_main,
            args=(child, self.extractor, self.settings),
            name="benchsmith-extract",
            daemon=True,
        )
        proc.start()
        child.close()
        return _Worker(proc=proc, conn=parent, started_at=time.monotonic())

    def _stop(self, worker: _Worker) -> None:
        if worker.stopped:
            return
        worker.stopped = True
        if worker.proc.is_alive():
            worker.proc.kill()
        worker.proc.join()
        worker.conn.close()
        worker.proc.close()

    def _replace(self, worker: _Worker) -> None:
        self._stop(worker)
        self.workers[self.workers.index(worker)] = self._start()

    def submit(self, index: int, doc: tuple[str, str | bytes, str]) -> bool:
        """Give ``doc`` to an idle ready worker; False when none is free."""
        for worker in self.workers:
            if worker.ready and worker.index is None:
                try:
                    worker.conn.send(doc)
                except OSError:  # it died while idle; the document waits for another worker
                    log.warning("an idle extraction worker exited; replacing it")
                    self._replace(worker)
                    continue
                worker.index, worker.doc_id = index, doc[0]
                worker.deadline = time.monotonic() + self.settings.timeout_s
                return True
        return False

    def collect(self) -> list[tuple[int, Extraction]]:
        """Wait for results, timeouts or deaths; return ``(index, Extraction)`` of finished docs."""
        now = time.monotonic()
        deadlines = [
            w.deadline if w.index is not None else w.started_at + _START_TIMEOUT_S
            for w in self.workers
            if w.index is not None or not w.ready
        ]
        timeout = max(0.0, min(deadlines) - now) if deadlines else None
        waitables: list[object] = [w.conn for w in self.workers]
        waitables += [w.proc.sentinel for w in self.workers]
        ready = set(wait(waitables, timeout))
        finished: list[tuple[int, Extraction]] = []
        for worker in list(self.workers):
            if worker.conn in ready:
                try:
                    message = worker.conn.recv()
                except (EOFError, OSError):
                    message = None
                if message == _READY:
                    worker.ready = True
                    continue
                if isinstance(message, Extraction) and worker.index is not None:
                    finished.append((worker.index, message))
                    worker.index = None
                    continue
            if worker.conn in ready or worker.proc.sentinel in ready:
                finished += self._died(worker)
            elif worker.index is not None and time.monotonic() >= worker.deadline:
                log.warning(
                    "%s: no result after %gs; killing its worker",
                    worker.doc_id,
                    self.settings.timeout_s,
                )
                reason = f"timeout after {self.settings.timeout_s:g}s"
                finished.append((worker.index, _failed(worker.doc_id, reason)))
                self._replace(worker)
            elif not worker.ready and time.monotonic() >= worker.started_at + _START_TIMEOUT_S:
                self._stop(worker)
                raise ExtractWorkerError(
                    f"an extraction worker did not start within {_START_TIMEOUT_S:g}s"
                )
        return finished

    def _died(self, worker: _Worker) -> list[tuple[int, Extraction]]:
        worker.proc.join(timeout=1)
        code = worker.proc.exitcode
        if not worker.ready:
            self._stop(worker)
            raise ExtractWorkerError(
                f"an extraction worker died while starting (exit code {code}); the extractor "
                "must be a top-level function of an importable module, and the main script a "
                "file guarded by if __name__ == '__main__' (workers are spawned)"
            )
        if worker.index is None:
            log.warning("an idle extraction worker exited (exit code %s); replacing it", code)
            self._replace(worker)
            return []
        log.warning("%s: its worker died (exit code %s); replacing it", worker.doc_id, code)
        failed = (worker.index, _failed(worker.doc_id, f"worker died (exit code {code})"))
        self._replace(worker)
        return [failed]


def extract_many(
    docs: Iterable[tuple[str, str | bytes, str]],
    settings: ExtractSettings | None = None,
    extractor: Extractor = extract_one,
) -> Iterator[Extraction]:
    """Extract ``(doc_id, html, url)`` documents in worker processes; one result each, in order.

    Runs ``settings.workers`` processes (spawn context; ``workers=1`` still uses one worker
    process so the timeout holds). A document that takes longer than ``settings.timeout_s``, or
    whose worker dies (segfault, ``os._exit``), becomes ``extract_failed`` with reason
    ``timeout after Ns`` or ``worker died (exit code C)``; its worker is killed and replaced and
    the rest go on. The input is read lazily: at most ``settings.batch_docs`` documents are held
    at once. ``extractor`` must be a picklable top-level function with the signature of
    :func:`extract_one`. Raises :class:`ExtractWorkerError` when workers cannot start at all.
    """
    settings = settings or ExtractSettings()
    source = iter(docs)
    queue: deque[tuple[int, tuple[str, str | bytes, str]]] = deque()
    results: dict[int, Extraction] = {}
    read = yielded = 0
    exhausted = False
    with _Pool(settings, extractor) as pool:
        while True:
            while not exhausted and read - yielded < settings.batch_docs:
                try:
                    doc = next(source)
                except StopIteration:
                    exhausted = True
                    break
                queue.append((read, doc))
                read += 1
            while queue and pool.submit(*queue[0]):
                queue.popleft()
            if yielded in results:
                while yielded in results:
                    yield results.pop(yielded)
                    yielded += 1
                continue
            if exhausted and yielded == read:
                return
            results.update(pool.collect())
