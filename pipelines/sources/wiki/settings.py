"""Settings of the ``wiki`` stage: which reader (dump or API), and which pages are events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import AwareDatetime, Field, StrictInt, model_validator

from builders.settings import Strict
from builders.wikigen.select import EventSelection
from pipelines.paths import InputFile
from pipelines.sources.wiki.languages import LANGUAGES, rules_for
from pipelines.sources.wiki.wikitext import PageRules


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
    log_path: InputFile | None = Field(
        None, description="Page-creation log dump (e.g. ...-pages-logging.xml.gz) for 'log'."
    )
    index_path: InputFile | None = Field(
        None,
        description=(
            "The index of a pages-articles-multistream dump (offset:page_id:title lines, plain "
            "or .bz2): only candidate pages are read, seeking to their bz2 streams. Candidates "
            "are the titles the creation log (creation_dates 'log') shows created in the "
            "window, plus those of candidates_path."
        ),
    )
    candidates_path: InputFile | None = Field(
        None,
        description="Extra candidate titles for index_path, one a line (e.g. category members).",
    )
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
        if self.index_path and self.creation_dates != "log" and self.candidates_path is None:
            raise ValueError(
                "index_path needs candidates: creation_dates 'log' (the titles created in the "
                "window) or candidates_path (a list of titles)"
            )
        return self


class ApiSettings(Strict):
    """Settings of the ``api`` reader and of API date look-ups."""

    url: str = Field(
        "https://en.wikipedia.org/w/api.php",
        pattern=r"^https?://",
        description="The wiki's api.php endpoint.",
    )
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
    retries: StrictInt = Field(
        5, ge=0, description="Retries of a failed request, with exponential backoff."
    )
    timeout_s: float = Field(30.0, gt=0, description="Timeout of one request.")


class HtmlSettings(Strict):
    """Settings of the ``html`` reader: rendered pages, live or from an Enterprise HTML dump."""

    source: Literal["rest", "enterprise"] = Field(
        "rest",
        description=(
            "'rest': candidates as the api reader finds them, each rendered by the wiki's REST "
            "API (rest.php/v1/page/{title}/html); 'enterprise': every article of a Wikimedia "
            "Enterprise HTML dump (NDJSON) at path."
        ),
    )
    path: InputFile | None = Field(None, description="Enterprise HTML dump, plain, .bz2 or .gz.")
    creation_dates: Literal["log", "api"] = Field(
        "api",
        description=(
            "Enterprise dumps carry no creation date: 'log' reads a page-creation log dump "
            "(log_path), 'api' asks wiki.api.url about candidate pages only."
        ),
    )
    log_path: InputFile | None = Field(
        None, description="Page-creation log dump for creation_dates 'log'."
    )
    snapshot_at: AwareDatetime | None = Field(
        None, description="When the dump was taken; each record's read_at. Unset: now."
    )

    @model_validator(mode="after")
    def _paths(self) -> HtmlSettings:
        if self.source == "enterprise" and self.path is None:
            raise ValueError("source 'enterprise' needs path (an Enterprise HTML dump)")
        if self.source == "enterprise" and self.creation_dates == "log" and not self.log_path:
            raise ValueError("creation_dates 'log' needs log_path (a page-creation log dump)")
        return self


class WikiSettings(EventSelection):
    """The ``wiki`` stage: which reader, and which pages count as fresh events."""

    reader: Literal["dump", "api", "html"] = Field(
        "dump",
        description=(
            "What produces Article records: dump (XML export or dump file), api (live MediaWiki "
            "wikitext) or html (rendered pages: live REST API or an Enterprise HTML dump)."
        ),
    )
    dump: DumpSettings | None = Field(None, description="The dump reader's file; needed by it.")
    html: HtmlSettings = Field(default_factory=HtmlSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    language: str = Field(
        "en",
        pattern=r"^[a-z]{2,3}(-[a-z0-9-]+)?$",
        description=(
            "The wiki's language code: it chooses the default skip_sections, the external "
            "links heading, file and category namespace names, infobox names, and whether "
            "lengths count words or characters (zh, ja). Defaults exist for en, zh, de, fr, "
            "es, ru and ja; another language needs skip_sections and external_links_section. "
            "It must be the wiki's own (a dump's xml:lang, the API's siteinfo lang): "
            "'benchsmith check' and the stage refuse another, naming the keys to set."
        ),
    )
    variant: str = Field(
        "",
        description=(
            "Chinese wikis: the variant -{...}- conversions resolve to (zh-hans, zh-hant, "
            "zh-cn, zh-tw, zh-hk...); empty takes the first one written."
        ),
    )
    skip_sections: list[str] | None = Field(
        None,
        description=(
            "Sections left out of sections, outline and length; unset: the language's defaults."
        ),
    )
    external_links_section: str | None = Field(
        None, description="Heading of the external links section; unset: the language's."
    )
    tables: Literal["drop", "text"] = Field(
        "drop",
        description=(
            "Wikitext tables: 'drop' leaves them out, as MediaWiki's plain-text extracts do (a "
            "page with most of its words in tables is then flagged suspect); 'text' renders "
            "each row as a line, cells joined by ' | '. The dump and api readers; the html "
            "reader's pages are MediaWiki's own rendering."
        ),
    )
    page_time_limit_s: float = Field(
        60.0,
        gt=0,
        description=(
            "A page whose wikitext takes longer than this to render is dropped (too_slow), "
            "named, and the stage goes on."
        ),
    )
    slow_page_s: float = Field(5.0, gt=0, description="Pages slower than this are logged.")

    def rules(self, namespaces: Mapping[int, str] | None = None) -> PageRules:
        """The rendering rules for this wiki, with its own namespace names (siteinfo)."""
        links = [self.external_links_section] if self.external_links_section else None
        return rules_for(
            self.language,
            skip_sections=self.skip_sections,
            external_links=links,
            variant=self.variant,
            namespaces=namespaces,
            tables_as_text=self.tables == "text",
        )

    def language_mismatch(self, site_language: str, where: str) -> str | None:
        """Why the wiki at ``where``, whose siteinfo gives ``site_language`` (a dump's
        ``xml:lang``, the API's ``lang``), must not be read with these settings, naming the keys
        to set; None when the languages agree or the wiki gives none."""
        site = site_language.strip().lower()
        if not site or site.split("-")[0] == self.language.split("-")[0]:
            return None
        keys = [f"wiki.language: {site}"]
        overrides = [k for k in ("skip_sections", "external_links_section") if getattr(self, k)]
        if site.split("-")[0] not in LANGUAGES and site not in LANGUAGES:
            keys += ["wiki.skip_sections", "wiki.external_links_section"]
            known = (
                f"{site!r} has no defaults (known: {', '.join(sorted(LANGUAGES))}): the other "
                "two keys are the headings of its sections to leave out and of its external links"
            )
        elif overrides:
            known = f"and unset {' and '.join(f'wiki.{k}' for k in overrides)}, which replace "
            known += f"the defaults of {site!r}"
        else:
            known = f"the defaults of {site!r} give its section names"
        return (
            f"{where} is a {site!r} wiki (its siteinfo says so), but wiki.language is "
            f"{self.language!r}: its pages would be read with {self.language!r} section names, "
            f"keeping its own 'see also' and 'external links' sections as text and finding no "
            f"external links. Set {', '.join(keys[:-1]) + ' and ' if keys[1:] else ''}{keys[-1]} "
            f"({known})."
        )

    @model_validator(mode="after")
    def _language_known(self) -> WikiSettings:
        missing = [
            key
            for key in ("skip_sections", "external_links_section")
            if getattr(self, key) is None and self.language not in LANGUAGES
        ]
        if missing:
            raise ValueError(
                f"wiki.language {self.language!r} has no defaults (known: "
                f"{', '.join(sorted(LANGUAGES))}); set {' and '.join(f'wiki.{k}' for k in missing)}"
            )
        return self

    @model_validator(mode="after")
    def _reader_configured(self) -> WikiSettings:
        if self.reader == "dump" and self.dump is None:
            raise ValueError("reader 'dump' needs a 'dump' section with a path")
        uses_api = (
            self.reader == "api"
            or (self.reader == "dump" and self.dump and self.dump.creation_dates == "api")
            or (self.reader == "html" and self.html.source == "rest")
            or (self.reader == "html" and self.html.creation_dates == "api")
        )
        if uses_api and not self.api.contact:
            raise ValueError(
                f"reader {self.reader!r} asks the MediaWiki API, which needs api.contact for "
                "its User-Agent"
            )
        return self
