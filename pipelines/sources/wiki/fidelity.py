"""How faithfully a page's wikitext became text: checked against the source, independently of
the parser, so a page the parser gets wrong is flagged rather than kept silently."""

from __future__ import annotations

import re
from collections.abc import Iterable

from builders.wikigen.records import Fidelity, RenderTally

# What MediaWiki never reads as headings: comments, verbatim blocks and citations.
_MASK_RE = re.compile(
    r"<!--.*?(?:-->|\Z)"
    r"|<(nowiki|pre|math|syntaxhighlight|source|ref)\b[^>]*?/>"
    r"|<(nowiki|pre|math|syntaxhighlight|source|ref)\b[^>]*>.*?(?:</\2\s*>|\Z)",
    re.S | re.I,
)
_HEADING_RE = re.compile(r"^=+[^\n]*?[^=\s][^\n]*?=+[ \t]*$", re.M)
_VERBATIM_RE = re.compile(
    r"<(nowiki|pre|syntaxhighlight|source|code|math|chem|ce)\b[^>]*>(.*?)(?:</\1\s*>|\Z)",
    re.S | re.I,
)
LEFTOVER_RE = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref\b|\{\||\|\}|''")
"""Wiki markup that plain text must not contain."""
TABLE_SHARE = 0.5
"""A page with more than this share of its words in tables (which plain text leaves out, as
MediaWiki's TextExtracts does) is suspect: "mostly tables" (issue 31)."""


def source_headings(wikitext: str) -> int:
    """The headings of ``wikitext`` as MediaWiki reads them: lines that open and close with
    ``=``, outside comments, ``<nowiki>``, ``<pre>``, ``<math>`` and ``<ref>``."""
    return len(_HEADING_RE.findall(_MASK_RE.sub("", wikitext)))


def leftover_markup(texts: Iterable[str]) -> list[str]:
    """The markup tokens left in rendered ``texts``."""
    return [token for text in texts for token in LEFTOVER_RE.findall(text)]


def verbatim_markup(wikitext: str) -> int:
    """Markup tokens the source shows as text on purpose (inside ``<nowiki>``, ``<pre>``...,
    and the TeX of ``<math>``, which the text shows as written)."""
    return sum(len(LEFTOVER_RE.findall(m[2])) for m in _VERBATIM_RE.finditer(wikitext))


def fidelity(
    wikitext: str,
    headings: int,
    texts: Iterable[str],
    tally: RenderTally | None = None,
    words: int = 0,
) -> Fidelity:
    """Compare the source's headings with the ``headings`` found, and look for markup left in
    the rendered ``texts`` beyond what the source shows verbatim; say why the page looks
    suspect, if it does (also when its ``tally`` has more words in tables than the ``words``
    kept)."""
    left = leftover_markup(texts)
    left = left[: max(0, len(left) - verbatim_markup(wikitext))] if "<" in wikitext else left
    return judged(source_headings(wikitext), headings, left, tally, words)


def table_share(tally: RenderTally, words: int) -> float:
    """The share of a page's words that are in its tables, from its ``tally`` and the
    ``words`` its text kept."""
    return tally.table_words / (tally.table_words + words) if tally.table_words else 0.0


def judged(
    expected: int,
    headings: int,
    left: list[str],
    tally: RenderTally | None = None,
    words: int = 0,
) -> Fidelity:
    """The fidelity of a page whose source has ``expected`` headings, ``headings`` of them
    found, with the markup tokens ``left`` in its text, ``words`` kept and what rendering met
    (``tally``)."""
    tally = tally or RenderTally()
    reasons = []
    if headings != expected:
        reasons.append(f"{headings} of {expected} headings found")
    if left:
        shown = ", ".join(sorted(set(left)))
        reasons.append(f"{len(left)} markup tokens left ({shown})")
    in_tables = table_share(tally, words)
    if in_tables > TABLE_SHARE:
        reasons.append(
            f"mostly tables: {in_tables:.0%} of its words ({tally.table_words:,} of "
            f"{tally.table_words + words:,}) are in tables, which the text leaves out"
        )
    return Fidelity(expected, headings, len(left), "; ".join(reasons), tally)
