"""Benchmark the wikitext renderer on real Wikipedia: throughput and fidelity, in one process.

The dump defaults to the shortened English pages-articles dump that gensim's wheel ships for its
tests (106 articles, 5.75 MB of wikitext), fetched from the package index into ``.cache/wheels``.
Every article's wikitext is rendered by ``parse_wikitext`` on one core; reported: MB of wikitext
per CPU-second, then the same for the whole reader (``read_dump``: decompression, XML, records
of every page, redirects included), and, checked against each page's source with rules of this
script, the articles whose headings were not all found, the markup tokens left in the text, the
empty brackets and the stray separators (" ;", " ,"), with a formula's TeX (shown on purpose)
not counted as markup. Then what the reader's own tally met (``RenderTally``): conversions and
the unit codes printed as written, formulas shown as TeX, and the pages with most of their words
in tables. Last, one page of templates nested
``--nesting`` deep, of a kind that is rendered (``nowrap``) and of one that is dropped
(``efn``), shows how rendering time grows with depth. Run:

    PYTHONPATH=. python bench/wikitext.py
    PYTHONPATH=. python bench/wikitext.py --dump path/to/pages-articles.xml.bz2
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import time
from pathlib import Path

from bench.wheels import member
from pipelines.sources.wiki.dump import iter_pages, read_dump
from pipelines.sources.wiki.fidelity import TABLE_SHARE, table_share
from pipelines.sources.wiki.wikitext import parse_wikitext

GENSIM = "gensim==4.4.0"
ENWIKI = (
    "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)

_HIDDEN = re.compile(
    r"<!--.*?-->|<nowiki>.*?</nowiki>|<ref[^>]*/>|<ref[^>]*>.*?</ref>|<pre>.*?</pre>", re.S
)
_HEADING = re.compile(r"^(=+)[^=\n].*?=+[ \t]*$", re.M)
_LEFT = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref|\{\||''")
_EMPTY = re.compile(r"\(\s*[,;:]*\s*\)")
_STRAY = re.compile(r" [,;]")
_MATH = re.compile(r"<math[^>]*>(.*?)</math>", re.S)


def _without_formulas(rendered: str, wikitext: str) -> str:
    """The rendered text with each formula's TeX (one line, as shown) replaced by a word."""
    for tex in sorted({" ".join(m.split()) for m in _MATH.findall(wikitext)}, key=len)[::-1]:
        rendered = rendered.replace(tex, "formula")
    return rendered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path, help="pages-articles dump (default: gensim's)")
    parser.add_argument("--label", default="this checkout", help="name of the code measured")
    parser.add_argument(
        "--nesting", type=int, nargs="*", default=[1000, 2000, 4000], help="template depths"
    )
    args = parser.parse_args()
    dump = args.dump or member(GENSIM, ENWIKI)
    pages = [
        (page.title, page.text)
        for _, page in iter_pages(dump)
        if page.namespace == 0 and not page.redirect_target and page.text
    ]
    size = sum(len(text.encode()) for _, text in pages) / 1e6
    start = time.process_time()
    parsed = [parse_wikitext(text) for _, text in pages]
    seconds = time.process_time() - start
    start = time.process_time()
    read = sum(1 for _ in read_dump(dump, skip_sections=[], creation_dates="api"))
    whole = time.process_time() - start
    headings = left = empty = stray = 0
    for (_, text), page in zip(pages, parsed, strict=True):
        rendered = "\n".join([page.summary, *(s.text for s in page.sections)])
        rendered = _without_formulas(rendered, text)
        headings += len(_HEADING.findall(_HIDDEN.sub("", text))) != len(page.sections)
        left += len(_LEFT.findall(rendered))
        empty += len(_EMPTY.findall(rendered))
        stray += len(_STRAY.findall(rendered))
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}"
    )
    print(f"dump: {dump.name}, {len(pages)} articles, {size:.2f} MB of wikitext")
    print(
        "| code | render MB/CPU-s | read_dump MB/CPU-s | articles missing headings "
        "| markup left | empty () | stray ; , |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {args.label} | {size / seconds:.2f} | {size / whole:.2f} | {headings} | {left} | "
        f"{empty} | {stray} |"
    )
    print(f"\n{read} pages read by read_dump in {whole:.1f} CPU-s; rendering alone {seconds:.1f}")
    tallies = [(page.tally, page.word_count) for page in parsed]
    raw = sorted({code for tally, _ in tallies for code in tally.raw_units})
    print(
        "\n| code | conversions | unit codes printed raw | formulas as TeX | mostly-table pages |"
    )
    print("|---|---:|---:|---:|---:|")
    print(
        f"| {args.label} | {sum(t.conversions for t, _ in tallies)} | "
        f"{sum(len(t.raw_units) for t, _ in tallies)} {raw or ''} | "
        f"{sum(t.math for t, _ in tallies)} | "
        f"{sum(table_share(t, words) > TABLE_SHARE for t, words in tallies)} |"
    )
    print("\n| nested templates | kind | CPU-s | CPU-s per 1,000 |")
    print("|---:|---|---:|---:|")
    for depth in args.nesting:
        for kind in ("nowrap", "efn"):  # rendered, dropped
            text = "Lead.\n== A ==\n" + f"{{{{{kind}|a " * depth + "core" + "}}" * depth + "\n"
            start = time.process_time()
            parse_wikitext(text)
            took = time.process_time() - start
            print(f"| {depth:,} | {kind} | {took:.3f} | {took / depth * 1000:.3f} |")


if __name__ == "__main__":
    main()
