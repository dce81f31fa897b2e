"""The sentence splitter against a reference splitter from the package index (pysbd), on the
snapshot wiki's prose: the two must agree on nearly every boundary, and where ours is built to
differ (line breaks, citations), the test says so."""

from __future__ import annotations

import pytest

from bench.sentences import starts_of
from builders.text import sentences
from pipelines.sources.wiki.dump import read_dump
from tests.support.snapshot import ROOT
from tests.support.wheels import importable

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def test_boundaries_agree_with_pysbd_on_the_snapshot_prose() -> None:
    importable("pysbd==0.3.4")
    import pysbd

    segmenter = pysbd.Segmenter(language="en", clean=False)
    prose = [
        text
        for article in read_dump(ROOT / "snapshot" / "wiki" / "export.xml", skip_sections=[])
        for text in (article.summary, *(s.text for s in article.sections))
        if text.strip() and "\n" not in text.strip()  # one paragraph: no list or line breaks
    ]
    ours = [{s for s, _ in sentences(t)} for t in prose]
    theirs = [set(starts_of(t, segmenter.segment(t))) for t in prose]
    shared = sum(len(a & b) for a, b in zip(ours, theirs, strict=True))
    assert len(prose) > 50
    assert shared / sum(map(len, ours)) > 0.98
    assert shared / sum(map(len, theirs)) > 0.98
