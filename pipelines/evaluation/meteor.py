"""METEOR as WikiGenBench reports it: the METEOR 1.5 jar with its English paraphrase table, run
the way NLG-eval runs it (``java -jar meteor-1.5.jar - - -stdio -l en -norm``).

WikiGenBench computes METEOR "using the NLG-eval package" (Section 3). NLG-eval's wrapper
(``nlgeval/pycocoevalcap/meteor/meteor.py``, Maluuba/nlg-eval at 2ab4528f) keeps one jar process
and speaks its stdio protocol: a ``SCORE ||| ref 1 ||| ... ||| ref n ||| hypothesis`` line per
article answers that article's sufficient statistics, and one ``EVAL ||| stats ||| ...`` line
answers every article's score, then the aggregate over all of them (the jar's corpus score, from
the summed statistics). ``compute_metrics`` reports that aggregate. The jar and paraphrase table
come from the PyPI package ``pycocoevalcap`` (1.2: the same files, byte for byte, as NLG-eval's),
found without importing it, so it may be installed with ``--no-deps``.

A long article is slow (the jar's aligner grows fast with length: about 2.5 s at 1,000 words and
over 2 minutes at 4,000 on one core) and one of 8,000 words exhausts a 2 GB heap; an article the
jar dies on, or that exceeds ``timeout_s``, is kept as failed with its reason, the jar is started
again, and the rest go on.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import IO

from pipelines.errors import BenchsmithError, require_program

PACKAGE = "pycocoevalcap"
INSTALL = "pip install --no-deps pycocoevalcap==1.2 (make setup does)"
JAR = "meteor/meteor-1.5.jar"
PARAPHRASES = "meteor/data/paraphrase-en.gz"
OPTIONS = ("-", "-", "-stdio", "-l", "en", "-norm")
"""The jar's arguments in NLG-eval: test and references from stdin, English, normalised."""
PURPOSE = "METEOR (the METEOR 1.5 jar)"
STATS_FIELDS = 23
"""Numbers in one article's sufficient statistics (Meteor 1.5's ``MeteorStats``)."""


class MeteorError(BenchsmithError):
    """The METEOR jar cannot be found or started, or its process failed."""


def check_java() -> str:
    """The path of ``java``; a :class:`BenchsmithError` with the install command without it."""
    return require_program("java", PURPOSE)


def find_jar() -> Path:
    """The installed ``meteor-1.5.jar`` (its paraphrase table beside it), without importing
    the package (its ``__init__`` modules import pycocotools)."""
    spec = importlib.util.find_spec(PACKAGE)
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in map(Path, roots):
        if (root / JAR).is_file() and (root / PARAPHRASES).is_file():
            return root / JAR
    where = f" (looked in {', '.join(roots)})" if roots else ""
    raise MeteorError(
        f"METEOR needs {JAR} and {PARAPHRASES} of the {PACKAGE} package, "
        f"which are not installed{where}: {INSTALL}"
    )


def check_meteor() -> Path:
    """What ``benchsmith check`` asks when METEOR is wanted: Java on PATH and the jar; the jar."""
    check_java()
    return find_jar()


def describe() -> str:
    """One line saying which METEOR gave the figures."""
    version = importlib.metadata.version(PACKAGE)
    return f"METEOR 1.5 jar ({PACKAGE} {version}), -l en -norm, as NLG-eval"


def score_line(hypothesis: str, references: Sequence[str]) -> str:
    """The ``SCORE`` line NLG-eval sends for one article (its ``Meteor._stat``): ``|||`` taken
    out of the hypothesis, every run of white space (newlines too) made one space. A ``|||``
    inside a reference is left, so the jar reads it as a boundary between two references, as in
    NLG-eval."""
    line = " ||| ".join(("SCORE", " ||| ".join(references), hypothesis.replace("|||", "")))
    return re.sub(r"\s+", " ", line)


@dataclass(frozen=True)
class ArticleMeteor:
    """One article's METEOR in [0, 1], or ``None`` with the reason it failed."""

    score: float | None
    error: str = ""


@dataclass(frozen=True)
class MeteorScores:
    """Every article's METEOR and the jar's aggregate over those scored (``corpus``, what
    NLG-eval's ``compute_metrics`` reports; ``None`` when none was). In [0, 1]: WikiGenBench's
    tables show 100 times it."""

    articles: list[ArticleMeteor] = field(default_factory=list)
    corpus: float | None = None

    @property
    def mean(self) -> float | None:
        """The mean of the scored articles' METEOR (NLG-eval's ``compute_individual_metrics``
        averaged per article); ``None`` when none was scored."""
        scored = [a.score for a in self.articles if a.score is not None]
        return fmean(scored) if scored else None

    @property
    def failed(self) -> int:
        """Articles the jar failed on."""
        return sum(a.score is None for a in self.articles)


class Meteor:
    """One METEOR 1.5 jar process in ``-stdio`` mode; score many articles through it with
    :meth:`score`, then :meth:`close` it (or use it as a context manager).

    ``memory`` is the jar's heap (``-Xmx``; NLG-eval's 2G). ``timeout_s`` bounds one article's
    alignment (``None``: no bound, as NLG-eval). Starting takes about 5 s: the paraphrase table
    loads.
    """

    def __init__(
        self,
        jar: Path | None = None,
        *,
        java: str = "java",
        memory: str = "2G",
        timeout_s: float | None = None,
    ) -> None:
        self.jar = Path(jar) if jar is not None else find_jar()
        if not self.jar.is_file():
            raise MeteorError(f"{self.jar}: no such METEOR jar; {INSTALL}")
        java = require_program(java, PURPOSE)
        self.command = [java, f"-Xmx{memory}", "-jar", str(self.jar), *OPTIONS]
        self.timeout_s = timeout_s
        self._process: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None
        self._lock = threading.Lock()
        self._start()

    def __enter__(self) -> Meteor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        """Start the jar and check it answers (the paraphrase table is loaded by then)."""
        # the jar's stderr, read when it fails; open as long as the process (closed by close())
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        env = {**os.environ, "LC_ALL": "C"}  # as NLG-eval
        self._process = subprocess.Popen(
            self.command,
            cwd=self.jar.parent,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
        )
        try:
            self._stats(score_line("a", ["a"]), timeout_s=None)
        except MeteorError as exc:
            self.close()
            raise MeteorError(f"METEOR did not start: {exc}") from None

    def close(self) -> None:
        """End the jar process (closing its input ends it) and forget it."""
        process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                with contextlib.suppress(BrokenPipeError):
                    process.stdin.close()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _failure(self, what: str) -> MeteorError:
        """The error for a process that stopped answering: the command and its stderr tail."""
        tail = ""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        if self._stderr is not None:
            self._stderr.seek(0)
            lines = [ln.strip() for ln in self._stderr.read().splitlines() if ln.strip()]
            tail = "; ".join(lines[:2])
        code = self._process.returncode if self._process is not None else None
        return MeteorError(
            f"{' '.join(self.command)}: {what} (exit status {code}){': ' + tail if tail else ''}"
        )

    def _ask(self, line: str, answers: int, timeout_s: float | None) -> list[str]:
        """Send one line and read ``answers`` lines back, within ``timeout_s``."""
        process = self._process
        if process is None or process.stdin is None or process.stdout is None:
            raise MeteorError(f"{' '.join(self.command)}: the METEOR process is closed")
        fired = threading.Event()

        def expire() -> None:
            fired.set()
            process.kill()

        timer = threading.Timer(timeout_s, expire) if timeout_s else None
        if timer is not None:
            timer.start()
        try:
            process.stdin.write(line + "\n")
            process.stdin.flush()
            replies = [process.stdout.readline() for _ in range(answers)]
        except (BrokenPipeError, OSError):
            replies = [""]
        finally:
            if timer is not None:
                timer.cancel()
        if fired.is_set():
            raise self._failure(f"an article took longer than {timeout_s:g} s")
        if not all(r.endswith("\n") for r in replies):
            raise self._failure("the METEOR process ended")
        return [r.strip() for r in replies]

    def _stats(self, line: str, timeout_s: float | None) -> str:
        """One article's sufficient statistics, checked."""
        (stats,) = self._ask(line, 1, timeout_s)
        if len(stats.split()) != STATS_FIELDS:
            raise self._failure(f"unexpected answer {stats[:200]!r}")
        return stats

    def article_stats(self, hypothesis: str, references: Sequence[str]) -> str:
        """The jar's sufficient statistics of one article (the ``SCORE`` answer); a
        :class:`MeteorError` when the jar fails on it (the process is started again)."""
        with self._lock:
            try:
                return self._stats(score_line(hypothesis, references), self.timeout_s)
            except MeteorError:
                self.close()
                self._start()
                raise

    def evaluate(self, stats: Sequence[str]) -> tuple[list[float], float]:
        """Each article's METEOR from its statistics, and the aggregate over all of them."""
        with self._lock:
            answers = self._ask(" ||| ".join(("EVAL", *stats)), len(stats) + 1, None)
        try:
            scores = [float(a) for a in answers]
        except ValueError:
            raise self._failure(f"unexpected EVAL answer {answers[:3]!r}") from None
        return scores[:-1], scores[-1]

    def score(self, pairs: Iterable[tuple[str, Sequence[str]]]) -> MeteorScores:
        """METEOR of each ``(hypothesis, references)`` article, in order, and the aggregate
        over those scored. An article the jar fails on is kept as failed with the reason."""
        results: list[ArticleMeteor | int] = []
        stats: list[str] = []
        for hypothesis, references in pairs:
            try:
                stats.append(self.article_stats(hypothesis, references))
                results.append(len(stats) - 1)
            except MeteorError as exc:
                results.append(ArticleMeteor(None, str(exc)))
        if not stats:
            return MeteorScores([r for r in results if isinstance(r, ArticleMeteor)])
        segments, corpus = self.evaluate(stats)
        articles = [ArticleMeteor(segments[r]) if isinstance(r, int) else r for r in results]
        return MeteorScores(articles, corpus)
