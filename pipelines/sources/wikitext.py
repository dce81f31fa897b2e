"""Wikitext to plain-text article parts with mwparserfromhell: sections, infobox, citations, links.

Both wiki readers (dump and api) parse the same wikitext with these functions, so their Article
records agree by construction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import mwparserfromhell
from mwparserfromhell.nodes import Comment, ExternalLink, Heading, Tag, Template, Wikilink
from mwparserfromhell.wikicode import Wikicode

from builders.wikigen.records import ExternalLink as LinkRecord
from builders.wikigen.records import Reference, Section

REDIRECT_RE = re.compile(r"^\s*#REDIRECT\s*:?\s*\[\[([^\]|#]+)", re.IGNORECASE)
# Left out of plain text, as in MediaWiki's own plain-text extracts (TextExtracts drops tables).
HIDDEN_TAGS = frozenset({"ref", "references", "table", "gallery", "math", "score", "timeline"})
_CITE_RE = re.compile(r"^(cite\b|citation$)", re.IGNORECASE)
_BLANK_LINES_RE = re.compile(r"\n{3,}")
_SPACES_RE = re.compile(r"[ \t\u00a0]+")


@dataclass(frozen=True)
class ParsedPage:
    """Everything the readers take from one page's wikitext."""

    redirect_target: str
    categories: list[str]
    templates: list[str]
    infobox_type: str
    infobox: dict[str, str]
    summary: str
    sections: list[Section]
    outline: list[str]
    word_count: int
    references: list[Reference]
    external_links: list[LinkRecord]


def template_name(template: Template) -> str:
    """Return a template's name with whitespace and underscores normalised."""
    return " ".join(str(template.name).replace("_", " ").split())


def _namespace_of(link: Wikilink) -> str:
    title = str(link.title).strip().lstrip(":")
    return title.split(":", 1)[0].strip().casefold() if ":" in title else ""


def _is_hidden(node: object, hidden: set[str]) -> bool:
    if isinstance(node, Template | Comment):
        return True
    if isinstance(node, Tag):
        return str(node.tag).lower() in HIDDEN_TAGS
    return isinstance(node, Wikilink) and _namespace_of(node) in hidden


def _drop_hidden(code: Wikicode, hidden: set[str]) -> None:
    for node in code.filter(recursive=False):
        if _is_hidden(node, hidden):
            code.remove(node)


def _render(code: Wikicode) -> str:
    text = code.strip_code(normalize=True, collapse=True)
    lines = [_SPACES_RE.sub(" ", line).strip() for line in text.splitlines()]
    return _BLANK_LINES_RE.sub("\n\n", "\n".join(lines)).strip()


def _hidden(namespaces: Iterable[str]) -> set[str]:
    return {ns.casefold() for ns in namespaces} | {"category", "file", "image"}


def plain_text(code: Wikicode | str, hidden_link_namespaces: Iterable[str] = ()) -> str:
    """Render wikitext as plain text: no refs, tables, templates, comments, files or categories."""
    code = mwparserfromhell.parse(str(code))
    _drop_hidden(code, _hidden(hidden_link_namespaces))
    return _render(code)


def words(text: str) -> int:
    """Count whitespace-separated words."""
    return len(text.split())


def _infobox(code: Wikicode) -> tuple[str, dict[str, str]]:
    for template in code.filter_templates(recursive=False):
        name = template_name(template)
        if name.casefold().startswith("infobox"):
            values = ((str(p.name).strip(), plain_text(p.value)) for p in template.params)
            fields = {name: value for name, value in values if name and value}
            return name[len("infobox") :].strip().casefold(), fields
    return "", {}


def _param(template: Template, *names: str) -> str:
    for name in names:
        if template.has(name):
            value = plain_text(template.get(name).value)
            if value:
                return value
    return ""


def cite_text(template: Template) -> str:
    """Render a ``{{cite ...}}`` template roughly as CS1 shows it."""
    author = _param(template, "author", "last", "last1")
    first = _param(template, "first", "first1")
    if author and first:
        author = f"{author}, {first}"
    parts = []
    date = _param(template, "date")
    if author:
        parts.append(f"{author} ({date})." if date else f"{author}.")
    title = _param(template, "title")
    if title:
        parts.append(f'"{title}".')
    source = _param(template, "website", "work", "newspaper", "publisher", "agency")
    if source:
        parts.append(f"{source}.")
    if date and not author:
        parts.append(f"{date}.")
    accessed = _param(template, "access-date", "accessdate")
    if accessed:
        parts.append(f"Retrieved {accessed}.")
    return " ".join(parts)


def _reference(tag: Tag) -> Reference | None:
    name = str(tag.get("name").value).strip() if tag.has("name") else ""
    if tag.contents is None or not str(tag.contents).strip():
        return None
    for template in tag.contents.filter_templates(recursive=False):
        if _CITE_RE.match(template_name(template)):
            url = _param(template, "url", "archive-url")
            return Reference(name=name, cite_text=cite_text(template), url=url)
    links = tag.contents.filter_external_links()
    url = str(links[0].url).strip() if links else ""
    return Reference(name=name, cite_text=plain_text(tag.contents), url=url)


def references(code: Wikicode) -> list[Reference]:
    """Return the page's distinct citations, in order of first use."""
    found: list[Reference] = []
    seen: set[str] = set()
    for tag in code.filter_tags(matches=lambda n: str(n.tag).lower() == "ref"):
        ref = _reference(tag)
        if ref is None:
            continue
        keys = {k for k in (f"name:{ref.name}" if ref.name else "", f"url:{ref.url}") if k}
        if ref.url == "":
            keys.add(f"text:{ref.cite_text}")
        if keys & seen:
            continue
        seen |= keys
        found.append(ref)
    return found


def _links(code: Wikicode) -> list[LinkRecord]:
    out = []
    for link in code.filter_external_links():
        if isinstance(link, ExternalLink):
            out.append(LinkRecord(url=str(link.url).strip(), title=plain_text(link.title or "")))
    return out


def parse_wikitext(
    text: str,
    *,
    skip_sections: Iterable[str],
    external_links_section: str = "External links",
    category_namespace: str = "Category",
) -> ParsedPage:
    """Parse one page's wikitext into the parts an Article record keeps.

    Sections named in ``skip_sections`` (and their subsections) are left out of the sections,
    outline and word count. Categories are the page's explicit category links.
    """
    code = mwparserfromhell.parse(text)
    match = REDIRECT_RE.match(text)
    redirect_target = match.group(1).strip() if match else ""
    skip = {s.casefold() for s in skip_sections}
    cat_prefix = category_namespace.casefold()

    categories = []
    for link in code.filter_wikilinks():
        if _namespace_of(link) == cat_prefix:
            name = str(link.title).strip().lstrip(":").split(":", 1)[1].strip()
            if name and name not in categories:
                categories.append(name)
    templates = list(
        dict.fromkeys(template_name(t) for t in code.filter_templates(recursive=False))
    )
    infobox_type, infobox = _infobox(code)

    references_found = references(code)
    # From here on the tree is cleaned in place once, then each section is rendered without
    # parsing it again.
    hidden = _hidden([category_namespace])
    summary, sections, ext_links = "", [], []
    skip_level = 0
    for chunk in code.get_sections(flat=True, include_lead=True):
        first = chunk.nodes[0] if chunk.nodes else None
        if not isinstance(first, Heading):
            _drop_hidden(chunk, hidden)
            summary = _render(chunk)
            continue
        title = plain_text(first.title)
        body = Wikicode(chunk.nodes[1:])
        if title.casefold() == external_links_section.casefold():
            ext_links = _links(body)
        if skip_level and first.level > skip_level:
            continue
        skip_level = first.level if title.casefold() in skip else 0
        if not skip_level:
            _drop_hidden(body, hidden)
            sections.append(Section(first.level, title, _render(body)))

    return ParsedPage(
        redirect_target=redirect_target,
        categories=categories,
        templates=templates,
        infobox_type=infobox_type,
        infobox=infobox,
        summary=summary,
        sections=sections,
        outline=[s.title for s in sections],
        word_count=words(summary) + sum(words(s.text) for s in sections),
        references=references_found,
        external_links=ext_links,
    )
