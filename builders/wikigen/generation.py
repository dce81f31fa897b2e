"""Generated Wikipedia articles: the outline a PRR plan names, and (re-exported from the
scorers every export ships, :mod:`benchsmith_scoring.wikigen`, so the toolkit and the harness
score with one implementation) the parsing and citation scores of an article."""

from __future__ import annotations

import re

from benchsmith_scoring.wikigen import CitationScores as CitationScores
from benchsmith_scoring.wikigen import Claim as Claim
from benchsmith_scoring.wikigen import article_claims as article_claims
from benchsmith_scoring.wikigen import citation_scores as citation_scores
from benchsmith_scoring.wikigen import claims as claims
from benchsmith_scoring.wikigen import has_sentences as has_sentences
from benchsmith_scoring.wikigen import reference_article as reference_article
from benchsmith_scoring.wikigen import sections as sections

_OUTLINE_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•]|={2,})\s*(.+?)\s*=*\s*$")


def outline(text: str, limit: int) -> list[str]:
    """Section headings of a planned outline (numbered, bulleted or ``==Name==`` lines), at most
    ``limit``, duplicates dropped."""
    found = []
    for line in text.splitlines():
        match = _OUTLINE_ITEM.match(line)
        if match:
            name = match[1].strip(" :.*=")
            if name and len(name) <= 120:
                found.append(name)
    return list(dict.fromkeys(found))[:limit]
