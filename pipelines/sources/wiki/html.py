"""Rendered (Parsoid) HTML to the parts an Article record keeps, as the wikitext path does.

MediaWiki renders the templates itself, so nothing here guesses what a template shows. The HTML
is the one MediaWiki's REST API serves (``rest.php/v1/page/{title}/html``) and Wikimedia
Enterprise HTML dumps carry (``article_body.html``): sections are ``<section>`` elements with
their heading first, categories are ``<link rel="mw:PageProp/Category">``, citations are the
items of ``ol.mw-references``, and each transclusion keeps its template name in ``data-mw``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from urllib.parse import unquote

import lxml.html
from lxml.html import HtmlElement

from builders.wikigen.records import ExternalLink, Reference
from pipelines.sources.wiki.wikitext import (
    TEMPLATE_NAMESPACES,
    PageRules,
    ParsedPage,
    assembled,
    collected,
    distinct_references,
    one_line,
    page_name,
    tidy,
)

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BLOCKS = frozenset(
    {
        "p",
        "div",
        "li",
        "dd",
        "dt",
        "ul",
        "ol",
        "dl",
        "blockquote",
        "pre",
        "tr",
        "caption",
        *_HEADINGS,
    }
)
# What plain text leaves out, as the wikitext path does: citations and their lists, tables,
# figures, maths, galleries, hatnotes, navigation boxes and styles.
_HIDDEN = (
    "//sup[contains(concat(' ', @class, ' '), ' reference ')]"
    " | //*[contains(concat(' ', @class, ' '), ' mw-references-wrap ')]"
    " | //ol[contains(concat(' ', @class, ' '), ' references ')]"
    " | //table | //figure | //style | //link | //meta | //script"
    " | //*[contains(concat(' ', @class, ' '), ' mwe-math-element ')]"
    " | //ul[contains(concat(' ', @class, ' '), ' gallery ')]"
    " | //*[contains(concat(' ', @class, ' '), ' hatnote ')]"
    " | //*[contains(concat(' ', @class, ' '), ' navbox ')]"
    " | //*[contains(concat(' ', @class, ' '), ' mw-empty-elt ')]"
)
_NOTE_ID_RE = re.compile(r"^cite_note-(.*?)-?\d*$")
_TEMPLATE_PREFIX_RE = re.compile(
    rf"^(?:\./)?(?:{'|'.join(n for ns in TEMPLATE_NAMESPACES.values() for n in ns)}):",
    re.IGNORECASE,
)


def _text(element: HtmlElement) -> str:
    """Plain text of ``element``: blocks on their own lines, ``<br>`` a line break."""
    parts: list[str] = []

    def walk(node: HtmlElement) -> None:
        tag = node.tag if isinstance(node.tag, str) else ""
        if tag == "br":
            parts.append("\n")
        block = tag in _BLOCKS
        if block:
            parts.append("\n")
        if node.text and tag not in ("style", "script"):
            parts.append(node.text)
        for child in node:
            walk(child)
            if child.tail:
                parts.append(child.tail)
        if block:
            parts.append("\n")

    walk(element)
    return tidy("".join(parts))


def _templates(body: HtmlElement) -> list[str]:
    """Names of the page's top-level templates, from each transclusion's ``data-mw`` (those in
    the reference list were written inside ``<ref>`` tags, so they are not top-level)."""
    names: list[str] = []
    top = (
        "//*[@data-mw][contains(@typeof, 'mw:Transclusion')]"
        "[not(ancestor::ol[contains(@class, 'references')])]"
    )
    for node in body.xpath(top):
        try:
            parts = json.loads(node.get("data-mw", "{}")).get("parts", [])
        except json.JSONDecodeError:
            continue
        for part in parts:
            target = part.get("template", {}).get("target", {}) if isinstance(part, dict) else {}
            wikitext = target.get("wt") or unquote(target.get("href", "")).replace("_", " ")
            name = " ".join(_TEMPLATE_PREFIX_RE.sub("", wikitext).replace("_", " ").split())
            if name and name not in names:
                names.append(name)
    return names


def _infobox(body: HtmlElement, templates: list[str], rules: PageRules) -> tuple[str, dict]:
    """The infobox's type (its template's name) and its rendered rows, label -> value."""
    kind = ""
    for name in templates:
        prefix = next((p for p in rules.infobox_prefixes if name.casefold().startswith(p)), "")
        if prefix:
            kind = name[len(prefix) :].strip().casefold()
            break
    tables = body.xpath("//table[contains(concat(' ', @class, ' '), ' infobox ')]")
    if not kind and not tables:
        return "", {}
    fields: dict[str, str] = {}
    for row in tables[0].xpath(".//tr") if tables else []:
        cells = row.xpath("./th|./td")
        if len(cells) == 2:
            key = "_".join(_text(cells[0]).casefold().split())
            value = one_line(_text(cells[1]))
            if key and value:
                fields.setdefault(key, value)
    return kind, fields


def _categories(body: HtmlElement) -> list[str]:
    found: list[str] = []
    for link in body.xpath("//link[@rel='mw:PageProp/Category']"):
        href = unquote(link.get("href", "")).split("#", 1)[0]
        name = page_name(href.rsplit("/", 1)[-1].split(":", 1)[-1])
        if name and name not in found:
            found.append(name)
    return found


def _references(body: HtmlElement) -> list[Reference]:
    candidates: list[Reference | None] = []
    for items in body.xpath("//ol[contains(concat(' ', @class, ' '), ' references ')]"):
        grouped = bool(items.get("data-mw-group"))
        for item in items.xpath("./li"):
            found = _NOTE_ID_RE.match(item.get("id", ""))
            name = found[1] if found and not found[1].isdigit() else ""
            texts = item.xpath(".//*[contains(concat(' ', @class, ' '), ' mw-reference-text ')]")
            links = item.xpath(".//a[@rel='mw:ExtLink']/@href")
            url = str(links[0]) if links else ""
            if grouped and not url:
                candidates.append(None)  # an explanatory note, not a source
                continue
            text = _text(texts[0]) if texts else ""
            candidates.append(Reference(name=name, cite_text=text, url=url))
    return distinct_references(candidates)


def _sections(body: HtmlElement) -> Iterator[tuple[int, str, HtmlElement]]:
    """``(level, title, element)`` of every section in order; the lead has level 0."""
    for section in body.xpath("//section[@data-mw-section-id]"):
        first = next(iter(section), None)
        tag = first.tag if first is not None and isinstance(first.tag, str) else ""
        if tag in _HEADINGS:
            yield int(tag[1]), _text(first), section
        elif section.get("data-mw-section-id") == "0":
            yield 0, "", section


def _links(section: HtmlElement) -> list[ExternalLink]:
    return [
        ExternalLink(url=str(a.get("href")), title=_text(a))
        for a in section.xpath(".//a[@rel='mw:ExtLink']")
    ]


def _own_text(section: HtmlElement) -> str:
    """The text of a section without its heading and its subsections."""
    copy = lxml.html.fromstring(lxml.html.tostring(section, encoding="unicode"))
    for node in copy.xpath("./section | ./h1 | ./h2 | ./h3 | ./h4 | ./h5 | ./h6"):
        node.drop_tree()
    for node in copy.xpath(_HIDDEN.replace("//", ".//")):
        node.drop_tree()
    return _text(copy)


def parse_html(html: str, rules: PageRules | None = None) -> ParsedPage:
    """Parse one page's rendered HTML into the same parts :func:`parse_wikitext` gives."""
    rules = rules or PageRules()
    body = lxml.html.document_fromstring(html).body
    templates = _templates(body)
    infobox_type, infobox = _infobox(body, templates, rules)
    references = _references(body)
    categories = _categories(body)
    summary, sections, links, headings = collected(_sections(body), rules, _own_text, _links)
    return assembled(
        rules,
        redirect_target="",
        categories=categories,
        templates=templates,
        infobox_type=infobox_type,
        infobox=infobox,
        summary=summary,
        sections=sections,
        references=references,
        external_links=links,
        headings=headings,
    )
