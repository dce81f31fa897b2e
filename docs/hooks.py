"""MkDocs hook: the Sphinx roles in docstrings (``:class:`Foo```) read as plain code."""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:mod|data|func|class|meth|attr|obj):(?=<code)")


def on_page_content(html: str, **_: Any) -> str:
    """Drop the role prefix MkDocs leaves before a rendered code span."""
    return ROLE.sub("", html)
