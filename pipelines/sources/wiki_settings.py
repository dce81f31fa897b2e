"""Settings of the ``wiki`` stage: which reader (dump or API), and which pages are events."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field, StrictInt, model_validator

from builders.settings import Strict
from builders.wikigen.select import EventSelection
from pipelines.paths import InputFile


class DumpSettings(Strict):
    """Settings of the ``dump`` reader (MediaWiki XML export or pages-articles dump)."""

    path: InputFile = Field(description="XML export or dump, plain, .bz2 or .gz.")
    creation_dates: Literal["history", "log", "api"] = Field(
        "history",
        description=(
            "Where created_at comes from: 'history' is the earliest revision in the export; "
            "'log' is a page-creation log dump (log_path); 'api' asks the MediaWiki API "
            "(wiki.api.url) about candidate pages only."
        ),
    )
    log_path: InputFile | None = None
    workers: StrictInt = Field(1, ge=1, description="Processes parsing wikitext (1: in-process).")
    snapshot_at: AwareDatetime | None = Field(
        None,
        description=(
            "When the export was taken; recorded as each record's read_at so reruns are "
            "reproducible. Unset: the time of the run."
        ),
    )

    @model_validator(mode="after")
    def _log_needs_path(self) -> DumpSettings:
        if self.creation_dates == "log" and self.log_path is None:
            raise ValueError("creation_dates 'log' needs log_path (a page-creation log dump)")
        return self


class ApiSettings(Strict):
    """Settings of the ``api`` reader and of API date look-ups."""

    url: str = Field("https://en.wikipedia.org/w/api.php", pattern=r"^https?://")
    contact: str = Field(
        "",
        pattern=r"^$|^https?://\S+$|^\S+@\S+\.\S+$",
        description="Contact URL or e-mail for the User-Agent (Wikimedia policy).",
    )
    categories: list[str] = Field(default_factory=list, description="Candidate categories.")
    new_pages: Literal["logevents", "recentchanges", "off"] = Field(
        "logevents",
        description=(
            "How pages created in the window are listed: the creation log (any window), recent "
            "changes (Wikipedia keeps 30 days), or not at all."
        ),
    )
    max_pages: StrictInt = Field(5000, gt=0, description="Cap on candidate pages.")
    batch_size: StrictInt = Field(20, gt=0, le=50, description="Titles per content request.")
    request_interval_s: float = Field(0.1, ge=0, description="Minimum gap between requests.")
    maxlag_s: StrictInt = Field(5, ge=0, description="Sent as maxlag; 0 disables it.")
    retries: StrictInt = Field(5, ge=0)
    timeout_s: float = Field(30.0, gt=0)


class WikiSettings(EventSelection):
    """The ``wiki`` stage: which reader, and which pages count as fresh events."""

    reader: Literal["dump", "api"] = "dump"
    dump: DumpSettings | None = None
    api: ApiSettings = Field(default_factory=ApiSettings)
    skip_sections: list[str] = Field(
        description="Sections left out of sections, outline and word count."
    )

    @model_validator(mode="after")
    def _reader_configured(self) -> WikiSettings:
        if self.reader == "dump" and self.dump is None:
            raise ValueError("reader 'dump' needs a 'dump' section with a path")
        uses_api = self.reader == "api" or (self.dump and self.dump.creation_dates == "api")
        if uses_api and not self.api.contact:
            raise ValueError("the api reader needs api.contact for its User-Agent")
        return self
