"""Exceptions raised by benchsmith; only the CLI turns them into exit codes."""

from __future__ import annotations

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
