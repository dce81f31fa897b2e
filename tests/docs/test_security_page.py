"""The security page names the tests that hold each promise: every one must exist."""

from __future__ import annotations

import re

from tests.support.snapshot import ROOT

PAGE = ROOT / "docs" / "security.md"


def test_every_test_file_and_test_the_security_page_names_exists():
    text = PAGE.read_text("utf-8")
    files = set(re.findall(r"`(tests/[\w/]+\.py)`", text))
    named = set(re.findall(r"`(test_\w+?)(?:\.py)?`", text))
    assert files and named
    missing = [f for f in files if not (ROOT / f).is_file()]
    assert not missing, missing
    sources = "\n".join(p.read_text("utf-8") for p in (ROOT / "tests").rglob("test_*.py"))
    modules = {p.stem for p in (ROOT / "tests").rglob("test_*.py")}
    prefixes = {n.removesuffix("*") for n in re.findall(r"`(test_\w+\*)`", text)}
    for name in named - prefixes:
        assert name in modules or f"def {name}(" in sources, f"{name} is named but not found"
    for prefix in prefixes:
        assert f"def {prefix}" in sources, prefix
