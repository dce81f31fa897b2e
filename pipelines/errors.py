"""Exceptions raised by benchsmith; only the CLI turns them into exit codes."""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path

from pipelines.secrets import redact


class BenchsmithError(Exception):
    """Base class for every error benchsmith raises on purpose.

    Its message is redacted (:func:`pipelines.secrets.redact`) when the error is made: a server
    that echoes a key into an error never puts it in front of the user, in a log or in a record.
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class ParamsError(BenchsmithError):
    """``params.yaml`` is missing, malformed, or fails validation."""


class MissingInputError(BenchsmithError):
    """A file a stage reads does not exist (or holds nothing usable).

    ``path`` is the file; whoever knows the stage table (the CLI) adds which stage writes it
    and the command to run, so no message here names a stage by hand.
    """

    def __init__(self, message: str, path: Path | None = None):
        super().__init__(message)
        self.path = path


class EmptyInputError(MissingInputError):
    """An input exists but holds nothing to work on: the stage that writes it ran and kept
    nothing, so running it again as it is gives the same.

    ``why`` says what that run reported and where to look; whoever knows the stage table names
    the stage (:meth:`named`).
    """

    def __init__(
        self, message: str, path: Path, why: str = "", producer: str = "the stage that writes it"
    ):
        super().__init__(f"{message}: {producer} ran but produced none{why}", path)
        self.message = message
        self.input = path
        self.why = why

    def named(self, stage: str) -> EmptyInputError:
        """The same error naming the stage that writes the input."""
        return EmptyInputError(self.message, self.input, self.why, f"the {stage} stage")


class SourceFormatError(BenchsmithError):
    """A source file (XML export, log dump) cannot be parsed."""


class WikiApiError(BenchsmithError):
    """The MediaWiki API answered with an error or could not be reached."""


class LLMError(BenchsmithError):
    """A model call failed for good: refused key, unknown model, unusable settings."""


class PromptError(BenchsmithError):
    """A prompt file is missing, malformed, or was rendered without a field it needs."""


class PublishError(BenchsmithError):
    """A table cannot be exported, a card cannot be rendered, or a push is refused."""


class ReviewError(BenchsmithError):
    """A reviews file line is malformed or names an item or release it cannot, or a review
    cannot be recorded; the message names the file and line, or what to send."""


PROGRAMS = {
    "dvc": "activate benchsmith's environment, or pip install dvc",
    "git": "install git (e.g. apt-get install git)",
    "java": "install Java: apt-get install -y --no-install-recommends default-jre-headless "
    "(as root, or with sudo)",
}
"""Programs benchsmith runs, and how to get each."""


def program_missing(name: str, purpose: str) -> BenchsmithError:
    """The error for a program ``name`` that is not on PATH, saying what needs it and how to get
    it."""
    fix = PROGRAMS.get(name, f"install {name}")
    return BenchsmithError(f"{purpose} needs the '{name}' program, which is not on PATH; {fix}")


def require_program(name: str, purpose: str) -> str:
    """The path of program ``name`` on PATH; :func:`program_missing` when there is none."""
    found = shutil.which(name)
    if found is None:
        raise program_missing(name, purpose)
    return found


WRITE_ERRORS = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT}
"""Error numbers of a write refused by the machine (read-only, permissions, no space)."""


def describe_os_error(exc: OSError, writes: Path | None = None) -> str:
    """One line for a failure of the machine rather than of benchsmith (a read-only or full
    disk, too many open files, a missing program): the path or program, and what to do.
    ``writes`` is the folder the command writes to, named when the error names no file (pyarrow
    reports a full disk so)."""
    if exc.errno == errno.ENOENT and exc.filename in PROGRAMS:
        return str(program_missing(exc.filename, "this command"))
    if exc.errno not in WRITE_ERRORS:
        writes = None  # a failure that is not of writing names only its own file
    other = ", or pass another --out" if _related(exc.filename, writes) else ""
    if exc.errno == errno.EROFS:
        problem, fix = "read-only file system", f"make it writable{other}"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        problem, fix = "permission denied", f"give this user access to it and its folder{other}"
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT):
        problem, fix = "no space left on device", f"free some space{other}"
        if exc.filename is None and writes is not None:
            problem += " while writing under it"
    elif exc.errno in (errno.EMFILE, errno.ENFILE):
        problem = "too many open files"
        fix = "raise the limit (ulimit -n) or lower workers or concurrency in params.yaml"
    else:
        problem, fix = exc.strerror or str(exc), ""
    path = exc.filename if exc.filename is not None else writes
    line = f"{path}: {problem}" if path is not None else problem
    return f"{line}; {fix}" if fix else line


def describe_cache_error(exc: sqlite3.OperationalError) -> str:
    """One line for an SQLite cache the machine refused to write (a full disk, a read-only or
    unopenable file): SQLite names no file, so the line says which caches there are."""
    return (
        f"a cache database failed: {exc}; the LLM, embedding and search caches are SQLite files "
        "(under .cache/ unless params.yaml moves them): free some space or make them writable"
    )


def _related(path: object, writes: Path | None) -> bool:
    """Whether a failure at ``path`` (None: unnamed) concerns the output ``writes``: the path
    is inside it, or it is a folder ``writes`` would be made in."""
    if writes is None:
        return False
    if path is None:
        return True
    failed, out = Path(str(path)).absolute(), writes.absolute()
    scratch = out.parent / f".{out.name}.tmp-"  # the run's scratch folder sits beside ``out``
    inside = next((p for p in (failed, *failed.parents) if p.parent == out.parent), None)
    if inside is not None and str(inside).startswith(str(scratch)):
        return True
    return failed.is_relative_to(out) or out.is_relative_to(failed)
