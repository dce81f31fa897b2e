"""Exceptions raised by benchsmith; only the CLI turns them into exit codes."""

from __future__ import annotations

from pathlib import Path


class BenchsmithError(Exception):
    """Base class for every error benchsmith raises on purpose."""


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
