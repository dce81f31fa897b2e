"""Canonical URLs, so one document reached under two spellings is fetched and kept once."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

TRACKING_PARAMS = ("utm_", "fbclid", "gclid", "mc_cid", "mc_eid", "ref_src", "cmpid")
DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_url(url: str) -> str:
    """Lower-case scheme and host; drop default port, fragment and tracking parameters."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
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
