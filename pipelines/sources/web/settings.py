"""Settings of the ``web`` stage: where related documents come from and the polite fetcher."""

from __future__ import annotations

import fnmatch
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, StrictInt, field_validator, model_validator

from builders.settings import Strict
from pipelines.paths import ProjectPath
from pipelines.sources.web.address_guard import parse_network, parse_target
from pipelines.sources.web.extract import ExtractSettings
from pipelines.sources.web.search.settings import SearchSettings


class FetchSettings(Strict):
    """The polite web fetcher: limits, retries, and which addresses it may reach."""

    contact: str = Field(
        "https://github.com/benchsmith",
        pattern=r"^https?://\S+$|^\S+@\S+\.\S+$",
        description="Contact URL or e-mail sent in the User-Agent.",
    )
    robots_agent: str = Field("benchsmith", description="Token matched against robots.txt.")
    concurrency: StrictInt = Field(16, gt=0, description="Requests in flight overall.")
    per_host_concurrency: StrictInt = Field(2, gt=0, description="Requests in flight per host.")
    per_host_delay_s: float = Field(1.0, ge=0, description="Gap between requests to one host.")
    connect_timeout_s: float = Field(10.0, gt=0, description="Timeout to connect.")
    read_timeout_s: float = Field(20.0, gt=0, description="Timeout between bytes read.")
    total_timeout_s: float = Field(60.0, gt=0, description="Cap on one request, body included.")
    max_bytes: StrictInt = Field(
        5_000_000,
        gt=0,
        description="Body cap in bytes, as sent and once decompressed; replay applies it too.",
    )
    max_redirects: StrictInt = Field(
        5, ge=0, description="Redirects followed (each hop's address checked again)."
    )
    retries: StrictInt = Field(3, ge=0, description="Retries on 429 and 5xx.")
    backoff_s: float = Field(1.0, ge=0, description="First backoff; doubles, with jitter.")
    max_retry_after_s: float = Field(120.0, ge=0, description="Longest Retry-After honoured.")
    content_types: list[str] = Field(
        default_factory=lambda: ["text/html", "application/xhtml+xml", "text/plain"],
        description=(
            "Content types extracted; other bodies end as not_html, and a binary body (an image, "
            "a PDF, an archive) as binary whatever its type says."
        ),
    )
    allow_addresses: list[str] = Field(
        default_factory=list,
        description=(
            "Non-global IP networks or addresses that may be fetched anyway, e.g. 127.0.0.1/32 "
            "(not host names); checked when params.yaml is loaded."
        ),
    )
    resolve: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Host patterns mapped to fixed IP addresses, an IPv4 one optionally with a port, "
            "e.g. {'*.example': '127.0.0.1:8443'}; checked when params.yaml is loaded."
        ),
    )
    ca_file: str | None = Field(None, description="Extra CA certificates to trust (PEM).")

    @field_validator("allow_addresses")
    @classmethod
    def _networks(cls, networks: list[str]) -> list[str]:
        for network in networks:
            parse_network(network)
        return networks

    @field_validator("resolve")
    @classmethod
    def _targets(cls, mapping: dict[str, str]) -> dict[str, str]:
        for pattern, target in mapping.items():
            try:
                parse_target(target)
            except ValueError as exc:
                raise ValueError(f"{pattern!r}: {exc}") from None
        return mapping


RESERVED_TLDS = ("example", "test", "invalid", "localhost")
"""Top-level domains no public host has (RFC 2606)."""
ARCHIVES = ("citation", "wayback")
"""The archives an archived copy of a dead link can come from (``web.archives.order``)."""


class ArchiveSettings(Strict):
    """Archived copies of dead human-editor links: which archives are tried, in order, and where.

    Only a human-editor link that ended ``dead``, ``error`` or ``not_html`` is tried; the
    archived copy is fetched by the same polite fetcher (robots.txt of the archive host, caps,
    address guard), kept in the WARC archive and replayed like any fetch.
    """

    order: list[Literal["citation", "wayback"]] = Field(
        default_factory=lambda: list(ARCHIVES),
        description=(
            "Archives tried, in this order: citation (the citation's own archive-url), wayback "
            "(the Wayback Machine's snapshot closest to the citation's access-date, else the "
            "event's date). Empty: archived copies are not tried."
        ),
    )
    wayback_api: str = Field(
        "https://archive.org/wayback/available",
        pattern=r"^https?://\S+$",
        description=(
            "The Wayback Machine's availability API (https://archive.org/help/wayback_api.php), "
            "asked ?url=...&timestamp=YYYYMMDD; another URL points at a stand-in speaking the "
            "same JSON."
        ),
    )

    @field_validator("order")
    @classmethod
    def _once(cls, order: list[str]) -> list[str]:
        if len(set(order)) != len(order):
            raise ValueError(f"an archive is named twice in {order}")
        return order


class WebSettings(Strict):
    """The ``web`` stage: where related documents come from and how they are fetched."""

    mode: Literal["replay", "live"] = Field(
        "replay",
        description=(
            "replay: read fetches from the archive and search results from the log, with no "
            "network; live: fetch and search for real, appending to both."
        ),
    )
    archive: ProjectPath = Field(description="Folder of .warc.gz files: replayed, or appended to.")
    search_log: ProjectPath = Field(
        description="JSONL of search results: replayed, or appended to."
    )
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    extract: ExtractSettings = Field(default_factory=ExtractSettings)
    archives: ArchiveSettings = Field(default_factory=ArchiveSettings)

    @model_validator(mode="after")
    def _live_archive_is_reachable(self) -> WebSettings:
        """A live run must not ask the snapshot's stand-in archive: a host under a reserved
        top-level domain (.example, .test, .invalid, .localhost) that ``fetch.resolve`` does
        not map is reachable nowhere."""
        if self.mode != "live" or "wayback" not in self.archives.order:
            return self
        host = (urlsplit(self.archives.wayback_api).hostname or "").lower()
        mapped = any(fnmatch.fnmatch(host, p.lower()) for p in self.fetch.resolve)
        if host.rsplit(".", 1)[-1] in RESERVED_TLDS and not mapped:
            raise ValueError(
                f"web.archives.wayback_api is {self.archives.wayback_api}, a host no live run can "
                "reach (the snapshot's stand-in); set it to "
                "https://archive.org/wayback/available, or leave wayback out of "
                "web.archives.order"
            )
        return self
