"""Wikitext to plain-text article parts with mwparserfromhell: sections, infobox, citations, links.

Both wiki readers (dump and api) parse the same wikitext with these functions, so their Article
records agree by construction; the MediaWiki integration test checks the plain text against
MediaWiki's own rendering.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import mwparserfromhell
from mwparserfromhell.nodes import (
    Comment,
    ExternalLink,
    Heading,
    Node,
    Tag,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.wikicode import Wikicode

from builders.wikigen.records import ExternalLink as LinkRecord
from builders.wikigen.records import Reference, Section
from pipelines.sources.inline_templates import render_inline

REDIRECT_RE = re.compile(r"^\s*#REDIRECT\s*:?\s*\[\[([^\]|#]+)", re.IGNORECASE)
# Left out of plain text, as in MediaWiki's own plain-text extracts (TextExtracts drops tables).
HIDDEN_TAGS = frozenset({"ref", "references", "table", "gallery", "math", "score", "timeline"})
# Sections whose {{cite ...}} templates are the sources of short citations ({{sfn}}, {{harvnb}}).
SOURCE_SECTIONS = frozenset({"sources", "works cited", "bibliography", "cited sources"})
_CITE_RE = re.compile(r"^(cite\b|citation$)", re.IGNORECASE)
_INTERWIKI_RE = re.compile(r"^[a-z]{2,3}(-[a-z]{2,8})*$")
_MAGIC_WORD_RE = re.compile(r"__[A-Z]+__")
_MARKUP_RE = re.compile(r"[\[\]{}<>'&*#:;=|~_]")
_BLANK_LINES_RE = re.compile(r"\n{3,}")
_SPACES_RE = re.compile(r"[ \t\u00a0]+")
_TEMPLATE_PREFIX_RE = re.compile(r"^template\s*:\s*", re.IGNORECASE)


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
    """Return a template's name without comments, ``Template:`` prefix or odd whitespace."""
    name = template.name.strip_code() if isinstance(template.name, Wikicode) else template.name
    name = " ".join(str(name).replace("_", " ").split())
    return _TEMPLATE_PREFIX_RE.sub("", name)


def page_name(name: str) -> str:
    """Normalise a page or category name as MediaWiki does: spaces, first letter upper case."""
    name = " ".join(name.replace("_", " ").split())
    return name[:1].upper() + name[1:]


def _namespace_of(link: Wikilink) -> str:
    title = str(link.title).strip()
    return title.split(":", 1)[0].strip().casefold() if ":" in title else ""


def _hidden_link(link: Wikilink, hidden: set[str]) -> bool:
    if str(link.title).strip().startswith(":"):
        return False  # [[:Category:X]] is a visible link, not a membership
    prefix = _namespace_of(link)
    return prefix in hidden or bool(_INTERWIKI_RE.match(prefix))


def _hidden_namespaces(namespaces: Iterable[str]) -> set[str]:
    return {ns.casefold() for ns in namespaces} | {"category", "file", "image"}


def _template_text(template: Template) -> str | None:
    args, named = [], {}
    for param in template.params:
        value = plain_text(param.value)
        if param.showkey:
            named[str(param.name).strip()] = value
        else:
            args.append(value)
    return render_inline(template_name(template).casefold(), args, named)


_DROP = object()


def _replacement(node: Node, hidden: set[str]) -> object:
    """What plain text shows for ``node``: ``_DROP``, a string, or ``None`` to keep it."""
    if isinstance(node, Template):
        text = _template_text(node)
        return _DROP if text is None else text
    if isinstance(node, Comment):
        return _DROP
    if isinstance(node, Tag):
        tag = str(node.tag).lower()
        if tag == "br":
            return "\n"
        return _DROP if tag in HIDDEN_TAGS else None
    if isinstance(node, Wikilink) and _hidden_link(node, hidden):
        return _DROP
    return None


def _clean(code: Wikicode, hidden: set[str]) -> None:
    """Remove or render, in place and at any depth, whatever plain text must not show."""
    nodes = code.nodes
    i = 0
    while i < len(nodes):
        node = nodes[i]
        replacement = _replacement(node, hidden)
        if replacement is _DROP:
            del nodes[i]
            continue
        if isinstance(replacement, str):
            nodes[i] = Text(replacement)
        else:
            for child in _children(node):
                _clean(child, hidden)
        i += 1


def _children(node: Node) -> list[Wikicode]:
    """The wikitext inside a node that stays in plain text."""
    if isinstance(node, Tag):
        inner = node.contents
    elif isinstance(node, Wikilink):
        inner = node.text
    elif isinstance(node, ExternalLink | Heading):
        inner = node.title
    else:
        inner = None
    return [inner] if inner is not None else []


def _render(code: Wikicode) -> str:
    return _tidy(_MAGIC_WORD_RE.sub("", code.strip_code(normalize=True, collapse=True)))


def _tidy(text: str) -> str:
    lines = [_SPACES_RE.sub(" ", line).strip() for line in text.splitlines()]
    return _BLANK_LINES_RE.sub("\n\n", "\n".join(lines)).strip()


def plain_text(code: Wikicode | str, hidden_link_namespaces: Iterable[str] = ()) -> str:
    """Render wikitext as plain text: refs, tables, comments, files and categories left out,
    inline templates such as ``{{convert}}`` rendered, every other template dropped."""
    text = str(code)
    if not _MARKUP_RE.search(text):
        return _tidy(text)  # nothing to parse: most citation and infobox values
    code = mwparserfromhell.parse(text)
    _clean(code, _hidden_namespaces(hidden_link_namespaces))
    return _render(code)


def words(text: str) -> int:
    """Count whitespace-separated words."""
    return len(text.split())


def _infobox(code: Wikicode) -> tuple[str, dict[str, str]]:
    for template in code.filter_templates(recursive=False):
        name = template_name(template)
        if name.casefold().startswith("infobox"):
            values = ((str(p.name).strip(), plain_text(p.value)) for p in template.params)
            fields = {name: "; ".join(v.splitlines()) for name, v in values if name and v}
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
    author = _param(template, "author", "last", "last1", "author1")
    first = _param(template, "first", "first1")
    if author and first:
        author = f"{author}, {first}"
    date = _param(template, "date", "year")
    parts = []
    if author:
        parts.append(f"{author} ({date})." if date else f"{author}.")
    title = _param(template, "title", "chapter")
    if title:
        parts.append(f'"{title}".')
    source = _param(
        template, "website", "work", "newspaper", "journal", "magazine", "publisher", "agency"
    )
    if source:
        parts.append(f"{source}.")
    if date and not author:
        parts.append(f"{date}.")
    accessed = _param(template, "access-date", "accessdate")
    if accessed:
        parts.append(f"Retrieved {accessed}.")
    return " ".join(parts)


def _cite_reference(template: Template, name: str = "") -> Reference:
    url = _param(template, "url", "archive-url", "chapter-url")
    doi = _param(template, "doi")
    if not url and doi:
        url = f"https://doi.org/{doi}"
    return Reference(name=name, cite_text=cite_text(template), url=url)


def _reference(tag: Tag) -> Reference | None:
    name = str(tag.get("name").value).strip() if tag.has("name") else ""
    if tag.contents is None or not str(tag.contents).strip():
        return None
    for template in tag.contents.filter_templates():
        if _CITE_RE.match(template_name(template)):
            return _cite_reference(template, name)
    links = tag.contents.filter_external_links()
    url = str(links[0].url).strip() if links else ""
    if tag.has("group") and not url:
        return None  # an explanatory note ({{efn}}, group="note"), not a source
    return Reference(name=name, cite_text=plain_text(tag.contents), url=url)


def _in_source_sections(code: Wikicode) -> list[Template]:
    found = []
    for section in code.get_sections(flat=True):
        heading = section.nodes[0] if section.nodes else None
        if isinstance(heading, Heading) and plain_text(heading.title).casefold() in SOURCE_SECTIONS:
            found += [t for t in section.filter_templates() if _CITE_RE.match(template_name(t))]
    return found


def references(code: Wikicode) -> list[Reference]:
    """Return the page's distinct citations: ``<ref>`` tags in order of first use, then the
    ``{{cite}}`` templates of source sections (the targets of short citations)."""
    candidates = [
        _reference(tag) for tag in code.filter_tags(matches=lambda n: str(n.tag).lower() == "ref")
    ]
    candidates += [_cite_reference(t) for t in _in_source_sections(code)]
    found: list[Reference] = []
    seen: set[str] = set()
    for ref in candidates:
        if ref is None or not (ref.url or ref.cite_text):
            continue  # a reuse (<ref name=x />) or a short citation with nothing to keep
        keys = {f"name:{ref.name}"} if ref.name else set()
        keys.add(f"url:{ref.url}" if ref.url else f"text:{ref.cite_text}")
        if keys & seen:
            continue
        seen |= keys
        found.append(ref)
    return found


def _links(code: Wikicode) -> list[LinkRecord]:
    return [
        LinkRecord(url=str(link.url).strip(), title=plain_text(link.title or ""))
        for link in code.filter_external_links()
        if isinstance(link, ExternalLink)
    ]


def _categories(code: Wikicode, prefix: str) -> list[str]:
    found: list[str] = []
    for link in code.filter_wikilinks():
        title = str(link.title).strip()
        if not title.startswith(":") and _namespace_of(link) == prefix:
            name = page_name(title.split(":", 1)[1])
            if name and name not in found:
                found.append(name)
    return found


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
    skip = {s.casefold() for s in skip_sections}
    categories = _categories(code, category_namespace.casefold())
    templates = list(
        dict.fromkeys(template_name(t) for t in code.filter_templates(recursive=False))
    )
    infobox_type, infobox = _infobox(code)
    references_found = references(code)

    # From here on each section is cleaned in place once and rendered without parsing again.
    hidden = _hidden_namespaces([category_namespace])
    summary, sections, ext_links = "", [], []
    skip_level = 0
    for chunk in code.get_sections(flat=True, include_lead=True):
        first = chunk.nodes[0] if chunk.nodes else None
        if not isinstance(first, Heading):
            _clean(chunk, hidden)
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
            _clean(body, hidden)
            sections.append(Section(first.level, title, _render(body)))

    return ParsedPage(
        redirect_target=page_name(match.group(1)) if match else "",
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
