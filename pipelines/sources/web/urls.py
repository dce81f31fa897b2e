"""Canonical URLs, so one document reached under two spellings is fetched and kept once."""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

TRACKING_PARAMS = ("utm_", "fbclid", "gclid", "mc_cid", "mc_eid", "ref_src", "cmpid")
DEFAULT_PORTS = {"http": 80, "https": 443}


def split_url(url: str) -> tuple[SplitResult, int | None]:
    """``url``'s parts and port; a malformed one (bad port, unclosed ``[``) is a ValueError
    that names it."""
    try:
        parts = urlsplit(url)
        return parts, parts.port
    except ValueError as exc:
        raise ValueError(f"malformed URL {url}: {exc}") from exc


def canonical_url(url: str) -> str:
    """Lower-case scheme and host; drop default port, fragment and tracking parameters.

    Raises ValueError, naming the URL, when it cannot be parsed.
    """
    parts, port = split_url(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    netloc = host if port in (None, DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    query = sorted(
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith(TRACKING_PARAMS)
    )
    return urlunsplit((scheme, netloc, parts.path or "/", urlencode(query), ""))


def host_of(url: str) -> str:
    """The lower-case host name of ``url``."""
    return (urlsplit(url).hostname or "").lower()
