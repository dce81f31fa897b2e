"""What every search provider shares: the hit record, the provider interface, query templates,
domain exclusion and secret redaction."""

from __future__ import annotations

import string
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from urllib.parse import urlsplit

from builders.wikigen.event_date import months_after
from pipelines.errors import BenchsmithError
from pipelines.secrets import redact as redact_secrets

QUERY_FIELDS = ("title", "year", "location")
"""Article fields a query template may use, e.g. ``"{title} {year}"``."""


class SearchError(BenchsmithError):
    """A search failed: bad query template, refused or failed request, missing credentials."""


class SearchUnavailable(SearchError):
    """A provider cannot serve any more queries this run: no key, key refused, API gone (410),
    quota spent. The provider chain moves on to the next provider."""

    def __init__(self, message: str, *, provider: str = ""):
        super().__init__(message)
        self.provider = provider


@dataclass(frozen=True)
class SearchHit:
    """One search result. ``rank`` is 1-based across pages; ``retrieved_at`` is UTC."""

    query: str
    provider: str
    rank: int
    url: str
    title: str
    snippet: str
    retrieved_at: datetime


class SearchProvider(ABC):
    """A search engine: a query in, ranked hits out."""

    name: str
    page_size: int = 10
    """Hits one request returns at most (what a query of ``num`` hits costs in requests)."""
    usd_per_1000: float | None = None
    """List price per 1,000 requests, dated where it is set; ``None``: unknown."""
    secrets: tuple[str, ...] = ()
    """Values that must never be written out (API keys); loggers and the search log redact them."""

    def unsupported(self, *, date_restrict: str | None, language: str | None) -> list[str]:
        """The settings this provider cannot honour as given, each with what it does instead
        (reported once per run, never silently ignored)."""
        return []

    @abstractmethod
    def search(
        self, query: str, *, num: int, date_restrict: str | None = None, language: str | None = None
    ) -> list[SearchHit]:
        """Up to ``num`` hits for ``query``, in rank order.

        ``date_restrict`` is Google's dateRestrict (``"m6"``: the last six months) and
        ``language`` its ``lr`` (``"lang_en"``); providers that cannot honour them ignore them.
        """


def template_fields(template: str) -> list[str]:
    """The field names ``template`` uses; ValueError for bad syntax or non-plain fields."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"query template {template!r} is not a valid template: {exc}") from None
    names = []
    for _, name, _, _ in parsed:
        if name is None:
            continue
        if not name.isidentifier():
            raise ValueError(
                f"query template {template!r} has field {{{name}}}; use plain names such as "
                f"{{title}} (known: {', '.join(QUERY_FIELDS)})"
            )
        names.append(name)
    return names


def render_queries(templates: Iterable[str], fields: Mapping[str, str]) -> list[str]:
    """Fill each template from ``fields``; unique, non-empty queries in template order.

    Whitespace is collapsed, so ``"{title} {location}"`` with no location gives the title alone.
    Raises :class:`SearchError` naming a field the template uses and ``fields`` lacks.
    """
    queries: list[str] = []
    for template in templates:
        try:
            names = template_fields(template)
        except ValueError as exc:
            raise SearchError(str(exc)) from None
        missing = [n for n in names if n not in fields]
        if missing:
            raise SearchError(
                f"query template {template!r} needs field {missing[0]!r}, which was not given "
                f"(given: {', '.join(sorted(fields)) or 'none'})"
            )
        query = " ".join(template.format_map(fields).split())
        if query and query not in queries:
            queries.append(query)
    return queries


def normalize_domain(domain: str) -> str:
    """``"*.Example.COM."`` -> ``"example.com"``; ValueError if it is not a bare host name."""
    cleaned = domain.strip().lower().removeprefix("*.").strip(".")
    if not cleaned or any(c in cleaned for c in "/:@?# ") or "." not in cleaned:
        raise ValueError(f"{domain!r} is not a domain name (write e.g. 'wikipedia.org')")
    return cleaned


def is_excluded(url: str, domains: Iterable[str]) -> bool:
    """Whether ``url``'s host is one of ``domains`` or a subdomain of one."""
    try:
        host = (urlsplit(url.strip()).hostname or "").rstrip(".")
    except ValueError:
        return False
    if not host:
        return False
    for domain in domains:
        d = domain.lower().removeprefix("*.").strip(".")
        if d and (host == d or host.endswith("." + d)):
            return True
    return False


def redact(text: str, secrets: Iterable[str], *, key_params: bool = True) -> str:
    """Replace every non-empty secret (also URL-encoded) with ``REDACTED``, as
    :func:`pipelines.secrets.redact` does (the environment's keys included).

    With ``key_params`` (the default) credential-shaped values are redacted too, such as any
    ``key=`` (or ``token=``, ``api_key=`` ...) URL query parameter: Google's client puts the API
    key there, and HttpError's text carries the URI. Without, only the secrets themselves (a
    hit's URL may hold an ordinary ``key=`` parameter).
    """
    return redact_secrets(text, secrets, patterns=key_params)


RESTRICT_UNITS = {"d": "days", "w": "weeks", "m": "months", "y": "years"}


def parse_restrict(date_restrict: str) -> tuple[str, int]:
    """Google's dateRestrict ``"m6"`` -> ``("m", 6)``; ValueError for anything else."""
    unit, amount = date_restrict[:1], date_restrict[1:]
    if unit not in RESTRICT_UNITS or not amount.isdigit() or int(amount) < 1:
        raise ValueError(f"{date_restrict!r} is not a date restriction such as 'm6' or 'd7'")
    return unit, int(amount)


def restrict_start(date_restrict: str, today: date) -> date:
    """The first day ``date_restrict`` lets through, counted back from ``today``."""
    unit, amount = parse_restrict(date_restrict)
    if unit in "dw":
        return today - timedelta(days=amount * (7 if unit == "w" else 1))
    return months_after(today, -amount * (12 if unit == "y" else 1))


def language_code(language: str) -> str:
    """Google's ``lr`` value ``"lang_en"`` -> ``"en"`` (``"lang_zh-TW"`` -> ``"zh-TW"``)."""
    return language.removeprefix("lang_")
