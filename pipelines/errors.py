"""Exceptions raised by benchsmith; only the CLI turns them into exit codes."""

from __future__ import annotations


class BenchsmithError(Exception):
    """Base class for every error benchsmith raises on purpose."""


class ParamsError(BenchsmithError):
    """``params.yaml`` is missing, malformed, or fails validation."""


class MissingInputError(BenchsmithError):
    """A file a stage reads does not exist."""


class SourceFormatError(BenchsmithError):
    """A source file (XML export, log dump) cannot be parsed."""


class WikiApiError(BenchsmithError):
    """The MediaWiki API answered with an error or could not be reached."""
