"""Wikitext to plain-text article parts with mwparserfromhell: sections, infobox, citations, links.

Both wiki readers (dump and api) parse the same wikitext with these functions, so their Article
records agree by construction; the MediaWiki integration test checks the plain text against
MediaWiki's own rendering.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, TypeVar

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

from builders.text import text_length
from builders.wikigen.records import ExternalLink as LinkRecord
from builders.wikigen.records import Reference, RenderTally, Section
from pipelines.sources.wiki import convert
from pipelines.sources.wiki.inline_templates import renderer_for

P = TypeVar("P")
REDIRECT_RE = re.compile(r"^\s*#REDIRECT\s*:?\s*\[\[([^\]|#]+)", re.IGNORECASE)
# Left out of plain text, as in MediaWiki's own plain-text extracts (TextExtracts drops tables).
HIDDEN_TAGS = frozenset({"ref", "references", "table", "gallery", "score", "timeline"})
MATH_TAGS = frozenset({"math", "chem", "ce"})
"""Formula tags: shown as their TeX source (:func:`_tex`)."""
_SHIELD = 0xF0000
"""A formula's characters are moved by this much, into Unicode's private use plane 15, while
the page's text is tidied (quote runs, brackets, separators, spaces), then moved back: the TeX
comes out as written."""
_SHIELDED_RE = re.compile("[\U000f0000-\U000ffffd]+")
# Sections whose {{cite ...}} templates are the sources of short citations ({{sfn}}, {{harvnb}}).
SOURCE_SECTIONS = frozenset({"sources", "works cited", "bibliography", "cited sources"})
_CITE_RE = re.compile(r"^(cite\b|citation$)", re.IGNORECASE)
_INTERWIKI_RE = re.compile(r"^[a-z]{2,3}(-[a-z]{2,8})*$")
_MAGIC_WORD_RE = re.compile(r"__[A-Z]+__")
_MARKUP_RE = re.compile(r"[\[\]{}<>'&*#:;=|~_]")
_BLANK_LINES_RE = re.compile(r"\n{3,}")
_SPACES_RE = re.compile(r"[ \t\u00a0]+")
TEMPLATE_NAMESPACES = {
    "en": ("Template",),
    "de": ("Vorlage",),
    "fr": ("Modèle",),
    "es": ("Plantilla",),
    "ru": ("Шаблон",),
    "ja": ("テンプレート",),
    "zh": ("模板", "样板", "樣板"),
}
"""Template namespace names per language; a prefix of any of them is stripped from a
template's name (``{{Vorlage:Infobox X}}`` is ``Infobox X``)."""
_TEMPLATE_PREFIX_RE = re.compile(
    rf"^(?:{'|'.join(n for names in TEMPLATE_NAMESPACES.values() for n in names)})\s*:\s*",
    re.IGNORECASE,
)
# -{...}- language conversion (Chinese wikis): an optional flag, then variant:text pairs or text
_CONVERSION_RE = re.compile(r"-\{(?:([A-Za-z;\s-]*)\|)?(.*?)\}-", re.S)
_VARIANT_RE = re.compile(r"(?:^|;)\s*(zh(?:-[a-z]+)?)\s*:", re.I)
_VARIANT_FALLBACKS = {
    "zh-cn": ("zh-cn", "zh-hans", "zh-sg", "zh-my", "zh"),
    "zh-sg": ("zh-sg", "zh-hans", "zh-cn", "zh-my", "zh"),
    "zh-my": ("zh-my", "zh-hans", "zh-sg", "zh-cn", "zh"),
    "zh-hans": ("zh-hans", "zh-cn", "zh-sg", "zh-my", "zh"),
    "zh-tw": ("zh-tw", "zh-hant", "zh-hk", "zh-mo", "zh"),
    "zh-hk": ("zh-hk", "zh-hant", "zh-mo", "zh-tw", "zh"),
    "zh-mo": ("zh-mo", "zh-hant", "zh-hk", "zh-tw", "zh"),
    "zh-hant": ("zh-hant", "zh-tw", "zh-hk", "zh-mo", "zh"),
}
_QUOTE_RUN_RE = re.compile(r"'{2,}")
_SEP = r"[,;:、，；]"
# "( ; x" -> "(x", "x ; )" -> "x)"
_INNER_SEPARATOR_RE = re.compile(
    rf"([(（\[])[ \t]*(?:{_SEP}[ \t]*)+|[ \t]*(?:{_SEP}[ \t]*)+([)）\]])"
)
_EMPTY_BRACKETS_RE = re.compile(r"[ \t]*(?:\([ \t]*\)|（[ \t]*）|\[[ \t]*\])")
_DOUBLE_SEPARATOR_RE = re.compile(rf"({_SEP})(?:[ \t]*{_SEP})+")
_SPACE_BEFORE_RE = re.compile(r"[ \t]+([,;.:!?)）])")


@dataclass(frozen=True)
class PageRules:
    """What rendering needs to know about the wiki a page comes from (names case-folded);
    :func:`pipelines.sources.wiki.languages.rules_for` makes them for a language."""

    skip_sections: frozenset[str] = frozenset()
    external_links: frozenset[str] = frozenset({"external links"})
    hidden_namespaces: frozenset[str] = frozenset({"category", "file", "image"})
    category_namespaces: frozenset[str] = frozenset({"category"})
    infobox_prefixes: tuple[str, ...] = ("infobox",)
    length_unit: Literal["words", "characters"] = "words"
    variant: str = ""
    """The variant ``-{...}-`` conversions resolve to (``zh-hans``, ``zh-tw``...); empty: the
    first one written."""
    tables_as_text: bool = False
    """Render tables as text, a row a line with its cells joined by `` | ``; else leave them out,
    as MediaWiki's plain-text extracts do."""


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
    headings: int
    """Every heading found, skipped sections' included."""
    tally: RenderTally = field(default_factory=RenderTally)
    """What rendering met that fidelity counts (conversions, formulas, tables)."""


def parse(text: str) -> Wikicode:
    """Parse wikitext with bold and italic left as text (``skip_style_tags``): an unclosed
    ``''`` would otherwise become a style tag that swallows the headings after it
    (mwparserfromhell issue 40). :func:`_render` removes the quote runs."""
    return mwparserfromhell.parse(text, skip_style_tags=True)


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


def _hidden_link(link: Wikilink, hidden: frozenset[str]) -> bool:
    if str(link.title).strip().startswith(":"):
        return False  # [[:Category:X]] is a visible link, not a membership
    prefix = _namespace_of(link)
    return prefix in hidden or bool(_INTERWIKI_RE.match(prefix))


def _hidden_namespaces(namespaces: Iterable[str]) -> frozenset[str]:
    return frozenset({ns.casefold() for ns in namespaces} | PageRules.hidden_namespaces)


@dataclass(frozen=True)
class _Scope:
    """What rendering a page needs beside its wikitext: the namespaces whose links are hidden,
    the date that templates such as ``{{age}}`` count to (none: they show only what needs no
    date), and whether tables are rendered."""

    hidden: frozenset[str] = field(default_factory=lambda: _hidden_namespaces(()))
    as_of: date | None = None
    tables: bool = False
    """Render tables as text (:attr:`PageRules.tables_as_text`)."""


_DEFAULT = _Scope()
MAX_POSITION = 100
"""A numbered argument beyond this (``{{x|100000000=…}}``) is kept by name: no renderer reads
that far, and a hostile page must not make a list that long."""


def template_args(
    template: Template, value: Callable[[Wikicode], str]
) -> tuple[list[str], dict[str, str]]:
    """A template's positional and named arguments, each rendered by ``value``, as MediaWiki
    numbers them: ``{{nowrap|1=x}}`` is the first positional argument, like ``{{nowrap|x}}``."""
    numbered: dict[int, str] = {}
    named: dict[str, str] = {}
    position = 0
    for param in template.params:
        key = str(param.name).strip()
        if not param.showkey:
            position += 1
            numbered[position] = value(param.value)
        elif key.isdigit() and 0 < int(key) <= MAX_POSITION:
            numbered[int(key)] = value(param.value)
        else:
            named[key] = value(param.value)
    args = [numbered.get(i, "") for i in range(1, max(numbered, default=0) + 1)]
    return args, named


def _template_text(template: Template, scope: _Scope) -> str | None:
    """The plain text of an inline template, or ``None`` to drop it. Only a template that is
    rendered has its parameters rendered, each once, from the nodes already parsed: work stays
    linear in the depth of nesting."""
    name = template_name(template)
    function, colon, first = name.partition(":")
    renderer = renderer_for((function if colon else name).casefold(), scope.as_of)
    if renderer is None:
        return None
    args, named = template_args(template, lambda code: _text(code, scope, shielded=True))
    return renderer([first.strip(), *args] if colon else args, named)


def _tex(tag: Tag) -> str:
    """A formula as its TeX source on one line: what Wikipedia's own alt text and plain-text
    extracts give, readable by a person or a model, and nothing of the formula is lost (a
    placeholder such as "[formula]" would leave "the expression [formula] means" to guess).
    It is shielded from the tidying of the text around it (:data:`_SHIELD`)."""
    source = " ".join(str(tag.contents or "").split())
    return "".join(chr(_SHIELD + ord(c)) if ord(c) < 0xFFFE else c for c in source)


def _unshielded(text: str) -> str:
    return _SHIELDED_RE.sub(lambda run: "".join(chr(ord(c) - _SHIELD) for c in run[0]), text)


_CELLS = frozenset({"td", "th"})


def _table_text(table: Tag, scope: _Scope) -> str:
    """A table as text: its caption, then a row a line, cells joined by `` | ``."""
    rows: list[list[Tag]] = [[]]
    for node in table.contents.nodes if table.contents else ():
        tag = str(node.tag).lower() if isinstance(node, Tag) else ""
        if tag == "tr":
            cells = node.contents.nodes if node.contents else []
            rows.append([c for c in cells if isinstance(c, Tag) and str(c.tag).lower() in _CELLS])
        elif tag in _CELLS or tag == "caption":
            rows[-1].append(node)  # a first row written without |-, or the caption (|+)
    lines = []
    for row in rows:
        texts = [_cell_text(cell, scope) for cell in row]
        if any(texts):
            lines.append(" | ".join(texts))
    return "\n" + "\n".join(lines) + "\n"


def _cell_text(cell: Tag, scope: _Scope) -> str:
    text = one_line(_text(cell.contents, scope, shielded=True))
    return text[1:].strip() if str(cell).startswith("|+") else text  # a caption


_DROP = object()


def _replacement(node: Node, scope: _Scope) -> object:
    """What plain text shows for ``node``: ``_DROP``, a string, or ``None`` to keep it."""
    if isinstance(node, Template):
        text = _template_text(node, scope)
        return _DROP if text is None else text
    if isinstance(node, Comment):
        return _DROP
    if isinstance(node, Tag):
        tag = str(node.tag).lower()
        if tag == "br":
            return "\n"
        if tag in MATH_TAGS:
            return _tex(node)
        if tag == "table" and scope.tables:
            return _table_text(node, scope)
        return _DROP if tag in HIDDEN_TAGS else None
    if isinstance(node, Wikilink) and _hidden_link(node, scope.hidden):
        return _DROP
    return None


def _clean(code: Wikicode, scope: _Scope) -> None:
    """Remove or render, in place and at any depth, whatever plain text must not show."""
    nodes = code.nodes
    i = 0
    while i < len(nodes):
        node = nodes[i]
        replacement = _replacement(node, scope)
        if replacement is _DROP:
            del nodes[i]
            continue
        if isinstance(replacement, str):
            nodes[i] = Text(replacement)
        else:
            for child in _children(node):
                _clean(child, scope)
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


def _quotes(run: re.Match[str]) -> str:
    """What a run of apostrophes shows once bold and italic are gone: MediaWiki reads four as
    an apostrophe then bold, and more than five as apostrophes then bold italic."""
    n = len(run[0])
    return "'" if n == 4 else "'" * max(0, n - 5)


def _orphans(text: str) -> str:
    """Remove what dropped templates leave behind: separators just inside brackets, then empty
    brackets, doubled separators and spaces before punctuation, until nothing changes."""
    while True:
        tidied = _EMPTY_BRACKETS_RE.sub("", _INNER_SEPARATOR_RE.sub(r"\1\2", text))
        tidied = _SPACE_BEFORE_RE.sub(r"\1", _DOUBLE_SEPARATOR_RE.sub(r"\1", tidied))
        if tidied == text:
            return text
        text = tidied


def _render(code: Wikicode, shielded: bool = False) -> str:
    """The text of cleaned ``code``, tidied; formulas stay shielded when it goes inside a
    larger text (a template's argument, a table's cell) that is tidied in turn."""
    text = _MAGIC_WORD_RE.sub("", code.strip_code(normalize=True, collapse=True))
    text = tidy(_orphans(_QUOTE_RUN_RE.sub(_quotes, text)))
    return text if shielded else _unshielded(text)


def tidy(text: str) -> str:
    lines = [_SPACES_RE.sub(" ", line).strip() for line in text.splitlines()]
    return _BLANK_LINES_RE.sub("\n\n", "\n".join(lines)).strip()


def _text(code: Wikicode | None, scope: _Scope = _DEFAULT, shielded: bool = False) -> str:
    """Render a part of an already parsed page in place (it is not parsed again)."""
    if code is None:
        return ""
    _clean(code, scope)
    return _render(code, shielded)


def plain_text(code: Wikicode | str, hidden_link_namespaces: Iterable[str] = ()) -> str:
    """Render wikitext as plain text: refs, tables, comments, files and categories left out,
    inline templates such as ``{{convert}}`` rendered, every other template dropped."""
    text = str(code)
    if not _MARKUP_RE.search(text):
        return tidy(text)  # nothing to parse: most citation and infobox values
    code = parse(text)
    _clean(code, _Scope(_hidden_namespaces(hidden_link_namespaces)))
    return _render(code)


def _converted(block: re.Match[str], variant: str) -> str:
    """One ``-{...}-`` block as the reader of ``variant`` sees it."""
    flags, body = (block[1] or "").strip(), block[2]
    if flags and any(f in flags for f in ("H", "T", "-")):
        return ""  # a conversion rule or a title, not text
    marks = list(_VARIANT_RE.finditer(body))
    if not marks:
        return body  # -{text}-: shown as written in every variant
    texts = {}
    for mark, nxt in zip(marks, [*marks[1:], None], strict=True):
        end = nxt.start() if nxt else len(body)
        texts.setdefault(mark[1].lower(), body[mark.end() : end].strip().rstrip(";").strip())
    for name in _VARIANT_FALLBACKS.get(variant.lower(), (variant.lower(),)):
        if name in texts:
            return texts[name]
    return next(iter(texts.values()))


def convert_variants(text: str, variant: str) -> str:
    """Resolve Chinese ``-{...}-`` language conversion markup for ``variant``."""
    if "-{" not in text:
        return text
    return _CONVERSION_RE.sub(lambda m: _converted(m, variant), text)


def _infobox(
    code: Wikicode, scope: _Scope, prefixes: tuple[str, ...]
) -> tuple[str, dict[str, str]]:
    for template in code.filter_templates(recursive=False):
        name = template_name(template)
        prefix = next((p for p in prefixes if name.casefold().startswith(p)), "")
        if prefix:
            values = ((str(p.name).strip(), _text(p.value, scope)) for p in template.params)
            fields = {name: one_line(v) for name, v in values if name and v}
            return name[len(prefix) :].strip().casefold(), fields
    return "", {}


def one_line(value: str) -> str:
    """An infobox value on one line: its non-empty lines joined by ``; ``."""
    return "; ".join(line for line in value.splitlines() if line.strip())


def _param(template: Template, *names: str) -> str:
    for name in names:
        if template.has(name):
            value = _text(template.get(name).value)
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
    return Reference(
        name=name,
        cite_text=cite_text(template),
        url=url,
        archive_url=_param(template, "archive-url", "archiveurl"),
        archive_date=_param(template, "archive-date", "archivedate"),
        access_date=_param(template, "access-date", "accessdate"),
    )


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
    return Reference(name=name, cite_text=_text(tag.contents), url=url)


def _in_source_sections(code: Wikicode) -> list[Template]:
    found = []
    for section in code.get_sections(flat=True):
        heading = section.nodes[0] if section.nodes else None
        if isinstance(heading, Heading) and _text(heading.title).casefold() in SOURCE_SECTIONS:
            found += [t for t in section.filter_templates() if _CITE_RE.match(template_name(t))]
    return found


def references(code: Wikicode) -> list[Reference]:
    """Return the page's distinct citations: ``<ref>`` tags in order of first use, then the
    ``{{cite}}`` templates of source sections (the targets of short citations)."""
    candidates = [
        _reference(tag) for tag in code.filter_tags(matches=lambda n: str(n.tag).lower() == "ref")
    ]
    candidates += [_cite_reference(t) for t in _in_source_sections(code)]
    return distinct_references(candidates)


def distinct_references(candidates: Iterable[Reference | None]) -> list[Reference]:
    """The citations in order of first use, each once (by name, else URL, else text); reuses
    and citations with neither URL nor text left out."""
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
        LinkRecord(url=str(link.url).strip(), title=_text(link.title))
        for link in code.filter_external_links()
        if isinstance(link, ExternalLink)
    ]


def _categories(code: Wikicode, prefixes: frozenset[str]) -> list[str]:
    found: list[str] = []
    for link in code.filter_wikilinks():
        title = str(link.title).strip()
        if not title.startswith(":") and _namespace_of(link) in prefixes:
            name = page_name(title.split(":", 1)[1])
            if name and name not in found:
                found.append(name)
    return found


_TABLE_CELLS = frozenset({"td", "th", "caption"})
_CONVERT = frozenset({"convert", "cvt"})


def tallied(
    code: Wikicode, source: str, length_unit: str, tables_as_text: bool = False
) -> RenderTally:
    """Count, before rendering, the page's conversions and the unit codes among them that have
    no name, its formulas, and the words (in ``length_unit``) of its tables' cells unless the
    tables are rendered as text; the page's ``source`` text says which walks of ``code`` can be
    skipped."""
    conversions, raw, math, table_words = 0, [], 0, 0
    lowered = source.lower()
    if "convert" in lowered or "cvt" in lowered:
        for template in code.filter_templates():
            if template_name(template).casefold() in _CONVERT:
                conversions += 1
                args = template_args(template, lambda v: str(v).strip())[0]
                raw += convert.unknown_units(args)
    if "<math" in lowered or "<chem" in lowered or "<ce" in lowered:
        math = len(code.filter_tags(matches=lambda n: str(n.tag).lower() in MATH_TAGS))
    if "{|" in source and not tables_as_text:
        tables = code.filter_tags(recursive=False, matches=lambda n: str(n.tag) == "table")
        for table in tables:
            cells = table.contents.filter_tags(matches=lambda n: str(n.tag).lower() in _TABLE_CELLS)
            table_words += sum(text_length(c.contents.strip_code(), length_unit) for c in cells)
    return RenderTally(conversions, tuple(raw), math, table_words)


def parse_wikitext(
    text: str, rules: PageRules | None = None, as_of: date | None = None
) -> ParsedPage:
    """Parse one page's wikitext into the parts an Article record keeps.

    Sections named in ``rules.skip_sections`` (and their subsections) are left out of the
    sections, outline and length. Categories are the page's explicit category links. Chinese
    ``-{...}-`` conversions are resolved for ``rules.variant`` first. Templates such as
    ``{{age}}`` count to ``as_of`` (the readers give the page's last revision date); without
    it they show only what needs no date.
    """
    rules = rules or PageRules()
    text = convert_variants(text, rules.variant)
    code = parse(text)
    match = REDIRECT_RE.match(text)
    categories = _categories(code, rules.category_namespaces)
    templates = list(
        dict.fromkeys(template_name(t) for t in code.filter_templates(recursive=False))
    )
    tally = tallied(code, text, rules.length_unit, rules.tables_as_text)
    references_found = references(code)  # before the infobox: rendering drops its refs
    scope = _Scope(rules.hidden_namespaces, as_of, rules.tables_as_text)
    infobox_type, infobox = _infobox(code, scope, rules.infobox_prefixes)

    # From here on each section is cleaned in place once and rendered without parsing again.

    def parts() -> Iterator[tuple[int, str, Wikicode]]:
        for chunk in code.get_sections(flat=True, include_lead=True):
            first = chunk.nodes[0] if chunk.nodes else None
            if isinstance(first, Heading):
                yield first.level, _text(first.title, scope), Wikicode(chunk.nodes[1:])
            else:
                yield 0, "", chunk

    summary, sections, ext_links, headings = collected(
        parts(), rules, lambda body: _text(body, scope), _links
    )

    return assembled(
        rules,
        redirect_target=page_name(match.group(1)) if match else "",
        categories=categories,
        templates=templates,
        infobox_type=infobox_type,
        infobox=infobox,
        summary=summary,
        sections=sections,
        references=references_found,
        external_links=ext_links,
        headings=headings,
        tally=tally,
    )


def collected(
    parts: Iterable[tuple[int, str, P]],
    rules: PageRules,
    text: Callable[[P], str],
    links: Callable[[P], list[LinkRecord]],
) -> tuple[str, list[Section], list[LinkRecord], int]:
    """The lead's text, the sections kept, the external links and the number of headings, from
    a page's ``(level, title, body)`` parts in order (the lead at level 0).

    A section named in ``rules.skip_sections`` is left out with its subsections, and never
    rendered; the external links come from the section ``rules.external_links`` names.
    """
    summary, sections, found = "", [], []
    skip_level = headings = 0
    for level, title, body in parts:
        if not level:
            summary = text(body)
            continue
        headings += 1
        if title.casefold() in rules.external_links:
            found = links(body)
        if skip_level and level > skip_level:
            continue
        skip_level = level if title.casefold() in rules.skip_sections else 0
        if not skip_level:
            sections.append(Section(level, title, text(body)))
    return summary, sections, found, headings


def assembled(
    rules: PageRules, *, summary: str, sections: list[Section], **parts: Any
) -> ParsedPage:
    """The parsed page, its outline and its length (in the rules' unit) made from its parts."""
    texts = [summary, *(s.text for s in sections)]
    return ParsedPage(
        summary=summary,
        sections=sections,
        outline=[s.title for s in sections],
        word_count=sum(text_length(t, rules.length_unit) for t in texts),
        **parts,
    )
