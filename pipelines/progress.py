"""The package logger and progress bars for loops a person waits on."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from pipelines.secrets import install_log_filter, redact

T = TypeVar("T")

LOGGER_NAME = "pipelines"


def setup_logging(level: int = logging.INFO) -> None:
    """Send the package's log records to stderr through rich, every record (any library's
    too) redacted of secrets (:func:`pipelines.secrets.install_log_filter`)."""
    from rich.logging import RichHandler

    install_log_filter()
    logger = logging.getLogger(LOGGER_NAME)
    if not logger.handlers:
        logger.addHandler(RichHandler(show_path=False, rich_tracebacks=False))
    logger.setLevel(level)


def progress_iter(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate with a rich progress bar (its label redacted) on a terminal; plainly otherwise
    (CI, DVC logs)."""
    if not sys.stderr.isatty() or os.environ.get("BENCHSMITH_NO_PROGRESS"):
        yield from items
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task(redact(description), total=total)
        for item in items:
            yield item
            bar.advance(task)
