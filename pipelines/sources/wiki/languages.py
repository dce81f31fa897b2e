"""What a wiki's language changes about reading its pages: the sections left out, the heading
of the external links, the names of the file and category namespaces, how infoboxes are named,
and whether lengths count words or characters (Chinese and Japanese, as LV-Eval counts them).
Template namespace names of every language are recognised everywhere
(:data:`~pipelines.sources.wiki.wikitext.TEMPLATE_NAMESPACES`).

Defaults are given for en, zh, de, fr, es, ru and ja. Every wiki also accepts the canonical
English namespace names, and the namespace names a dump's ``<siteinfo>`` (or the API) reports are
added to these, so a wiki in another language still hides its files and categories.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from pipelines.sources.wiki.wikitext import PageRules

FILE_NS, CATEGORY_NS = 6, 14
"""MediaWiki's namespace numbers for files and categories."""


@dataclass(frozen=True)
class Language:
    """One language's defaults (names are matched case-insensitively)."""

    skip_sections: tuple[str, ...]
    external_links: tuple[str, ...]
    file: tuple[str, ...] = ()
    category: tuple[str, ...] = ()
    infobox: tuple[str, ...] = ()
    length_unit: Literal["words", "characters"] = "words"


LANGUAGES: dict[str, Language] = {
    "en": Language(
        skip_sections=(
            "References", "External links", "See also", "Notes", "Further reading",
            "Bibliography", "Sources", "Citations", "Footnotes", "Notes and references",
            "References and notes", "Works cited", "Cited sources", "Sources and further reading",
        ),
        external_links=("External links",),
    ),
    "de": Language(
        skip_sections=(
            "Siehe auch", "Literatur", "Weblinks", "Einzelnachweise", "Anmerkungen", "Quellen",
        ),
        external_links=("Weblinks",),
        file=("Datei", "Bild"), category=("Kategorie",),
    ),
    "fr": Language(
        skip_sections=(
            "Voir aussi", "Notes et références", "Références", "Notes", "Bibliographie",
            "Liens externes", "Articles connexes",
        ),
        external_links=("Liens externes",),
        file=("Fichier",), category=("Catégorie",),
    ),
    "es": Language(
        skip_sections=(
            "Véase también", "Referencias", "Notas", "Bibliografía", "Enlaces externos",
        ),
        external_links=("Enlaces externos",),
        file=("Archivo", "Imagen"), category=("Categoría",),
        infobox=("ficha de",),
    ),
    "ru": Language(
        skip_sections=("См. также", "Примечания", "Литература", "Ссылки", "Источники"),
        external_links=("Ссылки",),
        file=("Файл", "Изображение"), category=("Категория",),
        infobox=("карточка",),
    ),
    "ja": Language(
        skip_sections=("関連項目", "脚注", "出典", "参考文献", "外部リンク", "注釈"),
        external_links=("外部リンク",),
        file=("ファイル", "画像"), category=("カテゴリ",),
        infobox=("基礎情報",),
        length_unit="characters",
    ),
    "zh": Language(
        skip_sections=(
            "参见", "參見", "参考文献", "參考文獻", "参考资料", "參考資料", "注释", "註釋",
            "外部链接", "外部連結", "延伸阅读", "延伸閱讀", "脚注", "腳註",
        ),
        external_links=("外部链接", "外部連結"),
        file=("文件", "檔案", "图像", "圖像"), category=("分类", "分類"),
        length_unit="characters",
    ),
}  # fmt: skip
"""The defaults per language code."""

_CANONICAL = Language(
    skip_sections=(),
    external_links=(),
    file=("File", "Image"),
    category=("Category",),
    infobox=("infobox",),
)


def _folded(*groups: Iterable[str]) -> frozenset[str]:
    return frozenset(name.casefold() for group in groups for name in group if name)


def rules_for(
    language: str = "en",
    *,
    skip_sections: Iterable[str] | None = None,
    external_links: Iterable[str] | None = None,
    variant: str = "",
    namespaces: Mapping[int, str] | None = None,
    tables_as_text: bool = False,
) -> PageRules:
    """The rendering rules for a page of a ``language`` wiki.

    ``skip_sections`` and ``external_links`` replace the language's defaults when given;
    ``namespaces`` are the wiki's own names (siteinfo) and are added to the known ones.
    """
    lang = LANGUAGES.get(language, _CANONICAL)
    site = namespaces or {}
    category = _folded(_CANONICAL.category, lang.category, [site.get(CATEGORY_NS, "")])
    files = _folded(_CANONICAL.file, lang.file, [site.get(FILE_NS, "")])
    return PageRules(
        skip_sections=_folded(lang.skip_sections if skip_sections is None else skip_sections),
        external_links=_folded(lang.external_links if external_links is None else external_links),
        hidden_namespaces=category | files,
        category_namespaces=category,
        infobox_prefixes=tuple(sorted(_folded(_CANONICAL.infobox, lang.infobox))),
        length_unit=lang.length_unit,
        variant=variant,
        tables_as_text=tables_as_text,
    )
