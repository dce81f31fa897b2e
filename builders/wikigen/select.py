"""Event selection: decide which wiki pages are fresh event articles, with one reason per rejection.

Rules run in a fixed order and the first that fails names the reason, so every rejected page
keeps exactly one reason:

``not_article`` (namespace other than main), ``redirect``, ``disambiguation``, ``list``,
``biography``, ``not_event``, ``too_short``, ``too_long``, then the creation window:
``created_unknown``, ``created_before_window``, ``created_after_window``.

The creation window is checked last so a reader that must look dates up (the API, for a dump
without history) asks only about pages that passed every other rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta

from pydantic import Field, StrictInt, field_validator, model_validator

from builders.drops import Drop
from builders.settings import Strict
from builders.wikigen.records import Article

REASONS = (
    "not_article",
    "redirect",
    "disambiguation",
    "list",
    "biography",
    "not_event",
    "too_short",
    "too_long",
    "created_unknown",
    "created_before_window",
    "created_after_window",
)


class EventSelection(Strict):
    """Settings of event selection (the selection keys of ``params.yaml``'s ``wiki``)."""

    created_after: date = Field(description="First creation day kept (inclusive, UTC).")
    created_before: date = Field(description="Last creation day kept (inclusive, UTC).")
    min_words: StrictInt = Field(1000, gt=0, description="WikiGenBench keeps 1,000-3,000 words.")
    max_words: StrictInt = Field(
        3000, gt=0, description="Longest article kept (characters on Chinese and Japanese wikis)."
    )
    event_infoboxes: list[str] = Field(
        description="Infobox types (without 'Infobox ') that mark an event article."
    )
    event_category_patterns: list[str] = Field(
        description="Regular expressions; a category matching one fully marks an event."
    )
    biography_infoboxes: list[str] = Field(
        description="Infobox types that mark a biography (rejected as biography)."
    )
    biography_category_patterns: list[str] = Field(
        description="Regular expressions; a category matching one fully marks a biography."
    )
    disambiguation_templates: list[str] = Field(
        description="Templates that mark a disambiguation page (rejected as disambiguation)."
    )
    list_title_prefixes: list[str] = Field(
        description="Title prefixes that mark a list article (rejected as list)."
    )
    list_category_patterns: list[str] = Field(
        description="Regular expressions; a category matching one fully marks a list article."
    )

    @field_validator(
        "event_category_patterns", "biography_category_patterns", "list_category_patterns"
    )
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from exc
        return patterns

    @model_validator(mode="after")
    def _ranges_are_ordered(self) -> EventSelection:
        if self.created_after > self.created_before:
            raise ValueError("created_after must not be later than created_before")
        if self.min_words > self.max_words:
            raise ValueError("min_words must not exceed max_words")
        return self


def _normal(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).casefold()


def _any_full_match(patterns: list[str], values: list[str]) -> str | None:
    for value in values:
        for pattern in patterns:
            if re.fullmatch(pattern, value, flags=re.IGNORECASE):
                return value
    return None


Rule = Callable[[Article, EventSelection], str | None]


def _namespace_detail(namespace: int) -> str | None:
    return f"namespace {namespace} is not the article namespace" if namespace != 0 else None


def _redirect_detail(is_redirect: bool, target: str) -> str | None:
    return f"redirects to {target!r}" if is_redirect else None


def _namespace(a: Article, s: EventSelection) -> str | None:
    return _namespace_detail(a.namespace)


def _redirect(a: Article, s: EventSelection) -> str | None:
    return _redirect_detail(a.is_redirect, a.redirect_target)


def unparsed_rejection(namespace: int, redirect_target: str) -> tuple[str, str] | None:
    """``(reason, detail)`` of the content rules a page fails before its wikitext is parsed:
    the first two, in order (not an article, a redirect the dump marks), so a reader can drop
    it unparsed with the reason :func:`check_content` would give."""
    if (detail := _namespace_detail(namespace)) is not None:
        return "not_article", detail
    if (detail := _redirect_detail(bool(redirect_target), redirect_target)) is not None:
        return "redirect", detail
    return None


def _disambiguation(a: Article, s: EventSelection) -> str | None:
    wanted = {_normal(t) for t in s.disambiguation_templates}
    hit = next((t for t in a.templates if _normal(t) in wanted), None)
    if hit:
        return f"uses template {{{{{hit}}}}}"
    if a.title.casefold().endswith("(disambiguation)"):
        return "title ends with '(disambiguation)'"
    return None


def _list(a: Article, s: EventSelection) -> str | None:
    for prefix in s.list_title_prefixes:
        if a.title.casefold().startswith(prefix.casefold()):
            return f"title starts with {prefix!r}"
    category = _any_full_match(s.list_category_patterns, a.categories)
    return f"in list category {category!r}" if category else None


def _biography(a: Article, s: EventSelection) -> str | None:
    if a.infobox_type and _normal(a.infobox_type) in {_normal(t) for t in s.biography_infoboxes}:
        return f"biography infobox {a.infobox_type!r}"
    category = _any_full_match(s.biography_category_patterns, a.categories)
    return f"in biography category {category!r}" if category else None


def _not_event(a: Article, s: EventSelection) -> str | None:
    if a.infobox_type and _normal(a.infobox_type) in {_normal(t) for t in s.event_infoboxes}:
        return None
    if _any_full_match(s.event_category_patterns, a.categories):
        return None
    infobox = repr(a.infobox_type) if a.infobox_type else "none"
    return f"infobox {infobox} and no category marks an event"


def _too_short(a: Article, s: EventSelection) -> str | None:
    short = a.word_count < s.min_words
    return f"{a.word_count} {a.length_unit} < min_words {s.min_words}" if short else None


def _too_long(a: Article, s: EventSelection) -> str | None:
    long = a.word_count > s.max_words
    return f"{a.word_count} {a.length_unit} > max_words {s.max_words}" if long else None


CONTENT_RULES: tuple[tuple[str, Rule], ...] = (
    ("not_article", _namespace),
    ("redirect", _redirect),
    ("disambiguation", _disambiguation),
    ("list", _list),
    ("biography", _biography),
    ("not_event", _not_event),
    ("too_short", _too_short),
    ("too_long", _too_long),
)


def window_bounds(s: EventSelection) -> tuple[datetime, datetime]:
    """Return the creation window as ``[start, end)`` UTC datetimes (both days inclusive)."""
    start = datetime.combine(s.created_after, time.min, tzinfo=UTC)
    end = datetime.combine(s.created_before + timedelta(days=1), time.min, tzinfo=UTC)
    return start, end


def _window(a: Article, s: EventSelection) -> tuple[str, str] | None:
    if a.created_at is None:
        return "created_unknown", f"no creation date ({a.created_at_source})"
    start, end = window_bounds(s)
    created = a.created_at.date().isoformat()
    if a.created_at < start:
        return "created_before_window", f"created {created} before {s.created_after}"
    if a.created_at >= end:
        return "created_after_window", f"created {created} after {s.created_before}"
    return None


def _reject(a: Article, step: str, reason: str, detail: str) -> Drop:
    return _page_drop(
        a.title, step, reason, detail, a.page_id, a.url, a.namespace, a.created_at,
        a.word_count, a.reader,
    )  # fmt: skip


def _page_drop(
    title: str,
    step: str,
    reason: str,
    detail: str,
    page_id: int,
    url: str,
    namespace: int,
    created_at: datetime | None,
    word_count: int | None,
    reader: str,
) -> Drop:
    return Drop.of(
        "wiki", "", "page", title, step, reason, detail,
        page_id=page_id, url=url, namespace=namespace, created_at=created_at,
        word_count=word_count, reader=reader,
    )  # fmt: skip


def reject_unparsed(
    title: str,
    *,
    page_id: int,
    url: str,
    namespace: int,
    redirect_target: str,
    created_at: datetime | None,
    reader: str,
) -> Drop | None:
    """The content drop of a page that fails a rule its wikitext is not needed for (not an
    article, a redirect the dump marks), made before parsing; its word count stays empty."""
    found = unparsed_rejection(namespace, redirect_target)
    if found is None:
        return None
    return _page_drop(title, "content", *found, page_id, url, namespace, created_at, None, reader)


def check_content(article: Article, settings: EventSelection) -> Drop | None:
    """Apply every rule except the creation window; return the first failure."""
    for reason, rule in CONTENT_RULES:
        detail = rule(article, settings)
        if detail is not None:
            return _reject(article, "content", reason, detail)
    return None


def check_window(article: Article, settings: EventSelection) -> Drop | None:
    """Apply the creation-window rule alone."""
    failure = _window(article, settings)
    return _reject(article, "window", *failure) if failure else None


def classify(article: Article, settings: EventSelection) -> Drop | None:
    """Return the article's rejection, or ``None`` when it is a selected event."""
    return check_content(article, settings) or check_window(article, settings)
