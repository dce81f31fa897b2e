import re

import pytest

from pipelines.sources.web.urls import canonical_url


def test_canonical_url_drops_what_does_not_name_the_document():
    assert canonical_url("HTTPS://WWW.Herald.example:443/a?utm_source=x&b=2&a=1#top") == (
        "https://www.herald.example/a?a=1&b=2"
    )
    assert canonical_url("http://herald.example") == "http://herald.example/"
    assert canonical_url("http://herald.example:8080/x") == "http://herald.example:8080/x"


def test_different_documents_stay_different():
    assert canonical_url("https://a.example/x?id=1") != canonical_url("https://a.example/x?id=2")
    assert canonical_url("https://a.example/x") != canonical_url("http://a.example/x")


def test_malformed_urls_are_rejected_naming_them():
    for url in ("http://example.com:8o80/", "http://example.com:99999/", "http://[::1"):
        with pytest.raises(ValueError, match=re.escape(url)):
            canonical_url(url)
